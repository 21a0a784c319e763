/**
 * `$app.subscriptionsBroker()`: the realtime clients of this node, as PocketBase's broker hands them
 * to hooks that send their own messages (`client.send(new SubscriptionMessage({name, data}))`). The
 * clients live in the host; each call asks it (`call('realtime', …)`).
 */
import type { Realm } from './realm.ts';

interface ClientInfo {
  id: string;
  subscriptions: string[];
  /** `record:<collectionId>:<id>`-like identity of whom the client subscribes as ('' for a guest). */
  auth: { collectionId?: string; id?: string } | null;
}

export function brokerApi(rt: Realm, findRecord: (collection: string, id: string) => unknown) {
  const client = (info: ClientInfo) => {
    const local = new Map<string, unknown>();
    let discarded = false;
    const self: any = {
      id: () => info.id,
      channel: () => null,
      subscriptions: (...prefixes: string[]) =>
        Object.fromEntries(info.subscriptions.filter((s) => prefixes.length === 0 || prefixes.some((p) => s.startsWith(String(p)))).map((s) => [s, { query: {}, headers: {} }])),
      hasSubscription: (name: string) => info.subscriptions.includes(String(name)),
      // PocketBase keeps the client's auth record under "auth".
      get: (key: string) => {
        if (local.has(key)) return local.get(key);
        if (key === 'auth' && info.auth?.collectionId && info.auth.id) {
          try {
            return findRecord(info.auth.collectionId, info.auth.id);
          } catch {
            return null;
          }
        }
        return null;
      },
      set: (key: string, value: unknown) => void local.set(String(key), value),
      unset: (key: string) => void local.delete(String(key)),
      send: (message: any) => {
        const data = message?.data;
        rt.call('realtime', 'send', info.id, String(message?.name ?? ''), typeof data === 'string' ? data : data instanceof Uint8Array || Array.isArray(data) ? Buffer.from(data as any).toString() : JSON.stringify(data ?? ''));
      },
      discard: () => {
        discarded = true;
        rt.call('realtime', 'discard', info.id);
      },
      isDiscarded: () => discarded,
    };
    return self;
  };
  const list = (): ClientInfo[] => rt.call('realtime', 'clients') ?? [];
  return {
    clients: () => Object.fromEntries(list().map((c) => [c.id, client(c)])),
    clientById: (id: string) => {
      const found = list().find((c) => c.id === String(id));
      if (!found) throw new Error('missing client');
      return client(found);
    },
    totalClients: () => list().length,
    chunkedClients: (size: number) => {
      const all = list().map(client);
      const n = Math.max(1, Number(size) || 1);
      const out: any[][] = [];
      for (let i = 0; i < all.length; i += n) out.push(all.slice(i, i + n));
      return out;
    },
  };
}
