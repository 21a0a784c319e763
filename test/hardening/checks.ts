import type { RawReply } from './http.ts';

/** What an answer must never contain: stack frames, source or data paths, driver error names. */
const INTERNALS = /\n\s+at |\bat [\w.<>]+ \(|\.ts:\d+|node_modules|\/tmp\/|SqliteError|SQLITE_[A-Z]|RangeError|TypeError|ReferenceError|Maximum call stack/;

/**
 * The problems with one answer under the owners' rules: never a 5xx; an error is JSON
 * `{data, message, status, code}` with `status` and `code` = the HTTP status (API contract §3, §23); no internals; no secret, anywhere.
 */
export function replyProblems(reply: RawReply, method: string, secrets: readonly string[], dataDir: string): string[] {
  const out: string[] = [];
  if (reply.status >= 500) out.push(`status ${reply.status}`);
  if (reply.status >= 400 && method !== 'HEAD') {
    const body = reply.json as Record<string, unknown> | undefined;
    const keys = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).sort().join(',') : '';
    if (keys !== 'code,data,message,status') out.push(`error body is not {data, message, status, code}: ${reply.text.slice(0, 200)}`);
    else {
      if (body!.code !== reply.status) out.push(`code ${String(body!.code)} differs from status ${reply.status}`);
      if (body!.status !== reply.status) out.push(`status ${String(body!.status)} differs from status ${reply.status}`);
      if (typeof body!.message !== 'string' || body!.message === '') out.push('error without a message');
      if (typeof body!.data !== 'object' || body!.data === null || Array.isArray(body!.data)) out.push('error data is not an object');
    }
  }
  if (INTERNALS.test(reply.text) || reply.text.includes(dataDir)) out.push(`internals in the answer: ${reply.text.slice(0, 300)}`);
  for (const s of secrets) if (reply.text.includes(s)) out.push(`a secret in the answer (${s.slice(0, 6)}…)`);
  return out;
}
