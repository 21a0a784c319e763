import http from 'node:http';
import type { Socket } from 'node:net';
import { EventSource } from 'eventsource';
import PocketBase from 'pocketbase';
import { waitFor } from './wait.ts';

/**
 * The PocketBase SDK looks for a global `EventSource` (browsers have one, Node 20 does not); the
 * `eventsource` package is a standards-following one for Node.
 */
(globalThis as { EventSource?: unknown }).EventSource ??= EventSource;

const sdkClients = new Set<PocketBase>();

/** An SDK client for `url`, sending `x-dbname: db` when given, with auto-cancellation off (tests send in parallel). */
export function sdkClient(url: string, db?: string): PocketBase {
  const pb = new PocketBase(url);
  sdkClients.add(pb);
  pb.autoCancellation(false);
  if (db) {
    pb.beforeSend = (u, options) => {
      options.headers = { ...(options.headers as Record<string, string>), 'x-dbname': db };
      return { url: u, options };
    };
  }
  return pb;
}

/**
 * Disconnects every SDK client made by `sdkClient`: one left subscribed would retry its connection
 * forever (the SDK's timers keep the test process alive after a failed test).
 */
export async function closeSdkClients(): Promise<void> {
  for (const pb of sdkClients) await pb.realtime.unsubscribe().catch(() => undefined);
  sdkClients.clear();
}

export interface SseEvent {
  /** The last event id, as an EventSource reports it: kept from earlier events until one sets another. */
  id: string;
  event: string;
  data: string;
}

/** A raw `text/event-stream` reader over node:http, for what the SDK hides (ids, comments, headers, the socket). */
export class SseStream {
  readonly events: SseEvent[] = [];
  comments = 0;
  ended = false;
  /** The server ended the response (its last chunk came): an end, not a connection lost. */
  completed = false;
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  socket?: Socket;
  private buffer = '';
  private current: Partial<SseEvent> = {};
  private lastEventId = '';
  private request?: http.ClientRequest;

  /** Opens the stream and waits for its first event (PB_CONNECT). */
  static async open(baseUrl: string, path = '/api/realtime', headers: Record<string, string> = {}): Promise<SseStream> {
    const stream = new SseStream();
    await stream.connect(baseUrl, path, headers);
    await stream.next((e) => e.event === 'PB_CONNECT', 'PB_CONNECT');
    return stream;
  }

  /** The client id PB_CONNECT gave. */
  get clientId(): string {
    const connect = this.events.find((e) => e.event === 'PB_CONNECT');
    if (!connect) throw new Error('no PB_CONNECT yet');
    return (JSON.parse(connect.data) as { clientId: string }).clientId;
  }

  private connect(baseUrl: string, path: string, headers: Record<string, string>): Promise<void> {
    const url = new URL(baseUrl);
    return new Promise((resolve, reject) => {
      // A fresh agentless connection per stream, as an EventSource has.
      this.request = http.get({ host: url.hostname, port: url.port, path, headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
        this.status = res.statusCode ?? 0;
        this.headers = res.headers;
        this.socket = res.socket;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => this.feed(chunk));
        res.on('end', () => {
          this.ended = true;
          this.completed = true;
        });
        res.on('close', () => (this.ended = true));
        res.on('error', () => (this.ended = true));
        resolve();
      });
      this.request.on('error', (err) => {
        this.ended = true;
        reject(err);
      });
    });
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) !== -1) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      if (line === '') {
        if (this.current.id !== undefined) this.lastEventId = this.current.id;
        if (this.current.event !== undefined || this.current.data !== undefined) {
          this.events.push({ id: this.lastEventId, event: this.current.event ?? 'message', data: this.current.data ?? '' });
        }
        this.current = {};
      } else if (line.startsWith(':')) this.comments++;
      else {
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') this.current.data = this.current.data === undefined ? value : `${this.current.data}\n${value}`;
        else if (field === 'id' || field === 'event') this.current[field] = value;
      }
    }
  }

  /** Waits for the first event from index `from` on that matches. */
  async next(match: (e: SseEvent) => boolean, what: string, timeoutMs = 10_000, from = 0): Promise<SseEvent> {
    return waitFor(() => this.events.slice(from).find(match), { timeoutMs, what });
  }

  /** Events after PB_CONNECT, as parsed `{event, data}`. */
  messages(): Array<{ event: string; action: string; record: Record<string, any> }> {
    return this.events.filter((e) => e.event !== 'PB_CONNECT').map((e) => ({ event: e.event, ...(JSON.parse(e.data) as { action: string; record: Record<string, any> }) }));
  }

  close(): void {
    this.request?.destroy();
  }
}

/** Subscribes a raw stream's client (POST /api/realtime) and returns the answer's status and body. */
export async function subscribeRaw(baseUrl: string, clientId: string, subscriptions: unknown, options: { token?: string; db?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.token) headers.authorization = options.token;
  if (options.db) headers['x-dbname'] = options.db;
  const res = await fetch(`${baseUrl}/api/realtime`, { method: 'POST', headers, body: JSON.stringify({ clientId, subscriptions }) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}
