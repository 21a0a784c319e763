import http from 'node:http';

/** A raw answer: status, headers, text, and the JSON body when there is one. */
export interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: unknown;
}

export interface RawRequest {
  method: string;
  /** Sent exactly as written: no dot-segment or percent-encoding normalization, unlike fetch. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** A 2xx answer is an endless stream: resolve with its status and headers and close it. */
  stream?: boolean;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** One HTTP request with node:http, so hostile paths reach the server as the test wrote them. */
export function send(baseUrl: string, req: RawRequest): Promise<RawReply> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    const r = http.request({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent: req.stream ? false : agent }, (res) => {
      if (req.stream && (res.statusCode ?? 0) < 300) {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', json: undefined });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        if ((res.headers['content-type'] ?? '').includes('application/json') && text !== '') {
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    r.on('error', reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

export function closeAgent(): void {
  agent.destroy();
}
