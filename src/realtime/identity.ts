import type { Auth } from '../context.ts';
import type { RealtimeClient } from './client.ts';

/**
 * Who a client subscribes as: the credentials of its subscription request (a token, an API key, or
 * none) in the database it named. Clients with the same credentials share one identity, re-checked
 * once per batch of changes before anything is sent to them.
 */
export class Identity {
  readonly clients = new Set<RealtimeClient>();

  constructor(
    readonly key: string,
    readonly dbName: string,
    /** The Authorization header's token or key; undefined for guests. */
    readonly bearer: string | undefined,
    /** The caller as last authenticated (its record's values may have changed since). */
    public auth: Auth,
  ) {}

  /** What PocketBase compares when a client changes its subscriptions: the caller's id ('' for guests). */
  get authId(): string {
    return authIdOf(this.auth);
  }
}

export function authIdOf(auth: Auth): string {
  return auth.type === 'guest' ? '' : `${auth.type}:${auth.id}`;
}

/** The identities in use, by credentials and database. */
export class Identities {
  private readonly byKey = new Map<string, Identity>();
  private readonly byClient = new Map<RealtimeClient, Identity>();

  /** Who `client` subscribes as, and in which database; undefined until its first subscription request. */
  of(client: RealtimeClient): Identity | undefined {
    return this.byClient.get(client);
  }

  /** The identity for these credentials, made or updated with `auth`, now used by `client`. */
  bind(client: RealtimeClient, dbName: string, bearer: string | undefined, auth: Auth): Identity {
    const key = `${dbName}\n${bearer ?? ''}`;
    let identity = this.byKey.get(key);
    if (!identity) {
      identity = new Identity(key, dbName, bearer, auth);
      this.byKey.set(key, identity);
    } else identity.auth = auth;
    if (this.byClient.get(client) !== identity) {
      this.release(client);
      this.byClient.set(client, identity);
      identity.clients.add(client);
    }
    return identity;
  }

  /** The client no longer uses its identity; an identity nobody uses is forgotten. */
  release(client: RealtimeClient): void {
    const identity = this.byClient.get(client);
    if (!identity) return;
    identity.clients.delete(client);
    this.byClient.delete(client);
    if (identity.clients.size === 0 && this.byKey.get(identity.key) === identity) this.byKey.delete(identity.key);
  }
}
