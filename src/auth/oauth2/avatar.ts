import type { OutboundPolicy } from '../../lib/outbound.ts';

/** Where a downloaded avatar goes: the file store's staging, as an upload of application code. */
export interface AvatarStaging<F> {
  stageBytes(originalName: string, bytes: Buffer): Promise<F>;
}

const TIMEOUT_MS = 10_000;

/**
 * Downloads the avatar an OAuth2 provider names, for an auth collection whose mapped avatar field is
 * a file field (PocketBase does the same). The address is checked after DNS resolution like every
 * outbound request (API contract §20), the body is bounded by the field's size limit, and any
 * failure leaves the avatar empty: as on PocketBase, a missing picture never fails a sign-in.
 */
export async function downloadAvatar<F>(url: string, maxBytes: number, staging: AvatarStaging<F>, outbound: OutboundPolicy | undefined): Promise<F | undefined> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return undefined;
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return undefined;
  // undici is loaded on the first sign-in that brings an avatar, not when the server starts.
  const { Agent, request } = await import('undici');
  const dispatcher = new Agent({ connect: outbound ? { lookup: outbound.lookup } : undefined, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  try {
    const res = await request(target, { method: 'GET', dispatcher, maxRedirections: 0, signal: AbortSignal.timeout(TIMEOUT_MS) } as Parameters<typeof request>[1]);
    if (res.statusCode !== 200) {
      await res.body.dump();
      return undefined;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > maxBytes) {
        res.body.destroy();
        return undefined;
      }
      chunks.push(chunk as Buffer);
    }
    const name = decodeURIComponent(target.pathname.split('/').filter(Boolean).pop() ?? '') || 'avatar';
    return await staging.stageBytes(name, Buffer.concat(chunks));
  } catch {
    return undefined;
  } finally {
    void dispatcher.close();
  }
}
