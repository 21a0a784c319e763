import type { Auth } from '../context.ts';

/** What a subscription request brings besides its body: the caller and the database it named. */
export interface Subscriber {
  dbName: string;
  auth: Auth;
  /** The Authorization header's token or key, kept to re-check the caller before sending. */
  bearer: string | undefined;
  /** The caller's address (checked against the client's); undefined when not known. */
  ip?: string;
}

/**
 * Application hooks on realtime (pb_hooks' onRealtimeConnectRequest, onRealtimeSubscribeRequest,
 * onRealtimeMessageSend): each may refuse (throw) or change what goes on.
 */
export interface RealtimeHooks {
  /** Before a client's stream opens; throwing refuses it (the error is the answer). */
  realtimeConnect(clientId: string, request: { headers: Record<string, unknown>; ip: string }): Promise<void>;
  /** Before a subscription request is applied to a client of this node: the topics to subscribe to. */
  realtimeSubscribe(clientId: string, caller: Subscriber, topics: string[]): Promise<string[]>;
  /** Whether record messages pass through handlers (each client's on its own, then). */
  realtimeMessages(): boolean;
  /** A message about to go to one client: the message to send, or undefined to send nothing. */
  realtimeMessage(clientId: string, caller: Auth | undefined, name: string, data: string): Promise<{ name: string; data: string } | undefined>;
}
