/**
 * Where each realtime client is connected, for the nodes of an instance. A client's event stream is
 * held by one node, but its subscription request (`POST /api/realtime`) may reach any node behind a
 * load balancer: that node looks the client up and hands the request to the node that holds it.
 */
export interface ClientDirectory {
  /** A client connected here. */
  connected(clientId: string): Promise<void>;
  /** A client connected here left. */
  disconnected(clientId: string): Promise<void>;
  /** The client's caller is now `authId` ('' for guests). */
  bound(clientId: string, authId: string): Promise<void>;
  /** A client connected to another node: its node and the caller it is bound to; undefined if unknown. */
  find(clientId: string): Promise<{ node: string; authId: string } | undefined>;
  /**
   * Hands a request to the node holding its client; settles as that node's handler did (an
   * `ApiError` of its refusal).
   */
  forward(node: string, request: Forwarded): Promise<void>;
  /** Receives the requests other nodes hand to this one; the handler's outcome is their answer. */
  onForwarded(fn: (request: Forwarded) => Promise<void>): void;
  close(): Promise<void>;
}

/** What one node hands to the node holding a client. */
export type Forwarded = ForwardedSubscription | ForwardedOAuth2Redirect;

/** A subscription request (`POST /api/realtime`); without `kind`, as nodes of earlier versions send it. */
export interface ForwardedSubscription {
  kind?: 'subscribe';
  clientId: string;
  dbName: string;
  /** The caller's token or key, checked again by the node holding the client. */
  bearer: string | undefined;
  /** The caller's address, checked against the client's by the node holding it (absent from earlier versions). */
  ip?: string;
  body: unknown;
}

/** What an OAuth2 provider sent to `/api/oauth2-redirect` for the client its `state` names. */
export interface ForwardedOAuth2Redirect {
  kind: 'oauth2-redirect';
  clientId: string;
  data: OAuth2RedirectData;
  /** The address the provider's redirect came from. */
  ip: string;
}

export interface OAuth2RedirectData {
  state: string;
  code: string;
  error: string;
}

/** One process holds every client (SQLite): nothing to look up elsewhere. */
export const localDirectory: ClientDirectory = {
  connected: async () => {},
  disconnected: async () => {},
  bound: async () => {},
  find: async () => undefined,
  forward: async () => {},
  onForwarded: () => {},
  close: async () => {},
};
