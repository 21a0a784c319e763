import type { Auth } from '../context.ts';
import { badRequest, forbidden, isApiError, notFound } from '../errors.ts';
import { randomId } from '../lib/ids.ts';
import { type Logger, silentLogger } from '../lib/logger.ts';
import type { RecordDeps } from '../records/deps.ts';
import type { DatabaseRegistry } from '../storage/index.ts';
import { Audiences, type Subscription } from './audiences.ts';
import { Broadcaster } from './broadcast.ts';
import { type DropReason, type EventStream, RealtimeClient } from './client.ts';
import { type ClientDirectory, localDirectory, type OAuth2RedirectData } from './directory.ts';
import type { ChangeFeed } from './feed.ts';
import { authIdOf, Identities, type Identity } from './identity.ts';
import { parseSubscribeRequest, parseTopic, type Topic } from './topics.ts';
import type { RealtimeHooks, Subscriber } from './app-hooks.ts';

// Kept below both this service and the broadcaster, which calls the message hooks.
export type { RealtimeHooks, Subscriber } from './app-hooks.ts';

export interface RealtimeLimits {
  /** Connected clients at most; more are refused with a 400. */
  maxClients: number;
  /** Topics per client at most; a subscription request with more is refused with a 400. */
  maxSubscriptions: number;
  /** Unsent bytes a client's stream may hold before the client is dropped as one that does not read. */
  clientBuffer: number;
  /** Idle streams get a comment at least this often, in milliseconds. */
  keepAliveMs: number;
  /**
   * How long a stream stays open at most, in milliseconds (0: no end). PocketBase ≥ 0.38 ends every
   * realtime connection after 30 minutes; the SDKs connect again and subscribe anew, so a client's
   * credentials and address are looked at afresh.
   */
  maxConnectionMs: number;
}

export interface RealtimeOptions {
  /** Where committed changes come from. */
  feed: ChangeFeed;
  /** Which node holds which client (several nodes); by default this process holds them all. */
  directory?: ClientDirectory;
  registry: DatabaseRegistry;
  records: RecordDeps;
  /** The caller behind a bearer in a database now (the auth domain's); a 401 when it no longer holds. */
  authenticate(bearer: string | undefined, dbName: string): Promise<Auth>;
  limits: RealtimeLimits;
}

/** The topic the SDK's OAuth2 popup flow waits on for the provider's code. */
const OAUTH2_TOPIC = '@oauth2';

// How long shutdown lets streams send what they hold before closing them outright.
const SHUTDOWN_GRACE_MS = 1000;

/**
 * PocketBase's realtime (API contract §10): clients connect to a server-sent event stream, name their
 * topics in a separate request, and get each committed change of a matching record as they would see
 * it from a view. State lives in this process: a client reconnects to any node and subscribes again.
 */
export class RealtimeService {
  private readonly clients = new Map<string, RealtimeClient>();
  private readonly identities = new Identities();
  /** Clients a subscription request under way is binding to its caller (see `subscribe`). */
  private readonly claims = new WeakMap<RealtimeClient, string>();
  /** Clients subscribed to `@oauth2`: waiting for the code of an OAuth2 sign-in (`oauth2Redirect`). */
  private readonly oauth2 = new WeakSet<RealtimeClient>();
  private readonly audiences = new Audiences();
  private readonly broadcaster: Broadcaster;
  private stopFeed?: () => void;
  private keepAlive?: NodeJS.Timeout;
  private closing = false;
  private allGone?: () => void;
  private log: Logger = silentLogger;
  /** The application hooks, set while hooks are loaded. */
  hooks?: RealtimeHooks;

  private readonly directory: ClientDirectory;

  constructor(private readonly o: RealtimeOptions) {
    this.directory = o.directory ?? localDirectory;
    // Requests for this node's clients that reached another node: its caller gets the answer given here.
    this.directory.onForwarded(async (request) => {
      if (request.kind === 'oauth2-redirect') {
        if (!this.handOAuth2Code(request.data, request.ip)) throw notFound('No client here waits for this OAuth2 sign-in.');
        return;
      }
      const auth = await o.authenticate(request.bearer, request.dbName);
      await this.subscribe({ dbName: request.dbName, auth, bearer: request.bearer, ip: request.ip }, request.body);
    });
    this.broadcaster = new Broadcaster({
      registry: o.registry,
      records: o.records,
      audiences: this.audiences,
      authenticate: (identity) => o.authenticate(identity.bearer, identity.dbName),
      drop: (client, reason) => this.drop(client, reason),
      overloaded: () => {
        for (const client of [...this.clients.values()]) this.drop(client, 'overload');
      },
      log: () => this.log,
      hooks: () => this.hooks,
    });
  }

  /** Starts keeping idle streams open; changes are taken from the feed while a client is connected. */
  start(log: Logger = silentLogger): void {
    this.log = log;
    // A tick every half interval pings streams idle for half an interval or more: none stays silent
    // longer than the interval.
    const half = Math.max(1, Math.floor(this.o.limits.keepAliveMs / 2));
    this.keepAlive = setInterval(() => this.ping(half), half);
    this.keepAlive.unref();
  }

  get clientCount(): number {
    return this.clients.size;
  }

  /** Refuses a new client (400) when the server holds as many as it may. */
  admit(): void {
    if (this.closing) throw badRequest('The server is shutting down; connect again.');
    if (this.clients.size >= this.o.limits.maxClients) {
      throw badRequest(`Too many realtime clients are connected (at most ${this.o.limits.maxClients}); try again later.`);
    }
  }

  /** The id of a client about to connect, once the hooks let it (they may refuse it by throwing). */
  async preconnect(request: { headers: Record<string, unknown>; ip: string }): Promise<string> {
    this.admit();
    const id = randomId(40);
    await this.hooks?.realtimeConnect(id, request);
    return id;
  }

  /** A new client on `stream`, opened from `ip`: its id goes out as the first message, `PB_CONNECT`. */
  async connect(stream: EventStream, id = randomId(40), ip = ''): Promise<RealtimeClient> {
    this.admit();
    const client = new RealtimeClient(id, stream, this.o.limits.clientBuffer, ip);
    // Changes are taken only while someone may want them: with several nodes, every node is told of
    // every other node's writes, and a node without clients then skips each notice at once.
    this.stopFeed ??= this.o.feed.subscribe(this.broadcaster.receive);
    this.clients.set(client.id, client);
    // Listed before its id goes out, so a subscription request reaching another node finds it.
    await this.directory.connected(client.id).catch((err) => this.log.warn({ err }, 'registering a realtime client failed'));
    client.flush(`id:${client.id}\nevent:PB_CONNECT\ndata:{"clientId":"${client.id}"}\n\n`);
    return client;
  }

  /** The client's stream closed (the client left, or was dropped). */
  disconnected(client: RealtimeClient): void {
    if (client.closed) return;
    client.closed = true;
    this.clients.delete(client.id);
    this.directory.disconnected(client.id).catch(() => undefined);
    this.audiences.replace(client, []);
    this.identities.release(client);
    if (this.clients.size === 0) {
      this.stopFeed?.();
      this.stopFeed = undefined;
      this.allGone?.();
    }
  }

  /**
   * `POST /api/realtime`: replaces a client's subscriptions. The caller becomes the client's identity
   * and its database the one whose records the client follows. 404 for an unknown client, 403 when
   * the client is already bound to another user or administrator (PocketBase's rule), 400 when the
   * request comes from another address than the client's stream (PocketBase ≥ 0.38: a guessed client
   * id is no use elsewhere). A client held by another node gets the request through the directory.
   */
  async subscribe(caller: Subscriber, body: unknown): Promise<void> {
    const request = parseSubscribeRequest(body, this.o.limits.maxSubscriptions);
    const client = this.clients.get(request.clientId);
    if (!client || client.closed) {
      const elsewhere = client ? undefined : await this.directory.find(request.clientId);
      if (!elsewhere) throw notFound('Missing or invalid client id.');
      if (elsewhere.authId !== '' && elsewhere.authId !== authIdOf(caller.auth)) throw forbidden("The current and the previous request authorization don't match.");
      await this.directory.forward(elsewhere.node, { clientId: request.clientId, dbName: caller.dbName, bearer: caller.bearer, ip: caller.ip, body });
      return;
    }
    if (client.ip !== '' && caller.ip !== undefined && caller.ip !== client.ip) throw badRequest('Invalid realtime client.');
    const authId = authIdOf(caller.auth);
    const bound = this.identities.of(client)?.authId || this.claims.get(client) || '';
    if (bound !== '' && bound !== authId) throw forbidden("The current and the previous request authorization don't match.");
    if (bound !== authId) this.directory.bound(client.id, authId).catch(() => undefined);
    // Claimed before anything is awaited (the application hooks): another user's request for the
    // same client arriving meanwhile meets this caller, as it would once the client is bound.
    const claims = authId !== '' && bound === '';
    if (claims) this.claims.set(client, authId);
    let identity: Identity;
    try {
      if (this.hooks) request.topics = await this.hooks.realtimeSubscribe(client.id, caller, request.topics);
      if (client.closed) return;
      identity = this.identities.bind(client, caller.dbName, caller.bearer, caller.auth);
    } finally {
      if (claims) this.claims.delete(client);
    }
    // The SDK sends the whole list again whenever it adds a topic: subscriptions that stay (same
    // topic, same identity) are kept as they are, so a change being sent meanwhile still reaches them.
    if (request.topics.includes(OAUTH2_TOPIC)) this.oauth2.add(client);
    else this.oauth2.delete(client);
    const kept = new Map(this.audiences.of(client).filter((s) => s.audience.identity === identity).map((s) => [s.topic, s]));
    const next: Subscription[] = [];
    for (const topic of request.topics.map(parseTopic).filter((t): t is Topic => t !== undefined)) {
      const old = kept.get(topic.name);
      kept.delete(topic.name);
      next.push(old ?? this.audiences.add(client, topic, identity));
    }
    this.audiences.replace(client, next);
  }

  /**
   * PocketBase's OAuth2 redirect (`/api/oauth2-redirect`): hands what the provider sent back (`code`,
   * or `error`) to the realtime client its `state` names when that client waits on `@oauth2`, as the
   * SDK's `authWithOAuth2({provider})` expects; it then stops waiting. The client may be held by
   * another node (the popup's request reached this one): the directory hands it there. False when no
   * such client waits anywhere, its node did not answer, or the redirect comes from another address
   * than the client's stream (PocketBase ≥ 0.38; the client then waits no more either).
   */
  async oauth2Redirect(data: OAuth2RedirectData, ip: string): Promise<boolean> {
    if (this.clients.has(data.state)) return this.handOAuth2Code(data, ip);
    const elsewhere = await this.directory.find(data.state).catch(() => undefined);
    if (!elsewhere) return false;
    try {
      await this.directory.forward(elsewhere.node, { kind: 'oauth2-redirect', clientId: data.state, data, ip });
      return true;
    } catch (err) {
      if (!isApiError(err) || err.status >= 500) this.log.warn({ err, node: elsewhere.node }, 'handing an OAuth2 code to another node failed');
      return false;
    }
  }

  /** Hands an OAuth2 redirect from `ip` to the client of this node its `state` names; false when none waits. */
  private handOAuth2Code(data: OAuth2RedirectData, ip: string): boolean {
    const client = this.clients.get(data.state);
    if (!client || client.closed || !this.oauth2.has(client)) return false;
    this.oauth2.delete(client);
    if (client.ip !== '' && ip !== client.ip) return false;
    const message = JSON.stringify(data.error === '' ? { state: data.state, code: data.code } : data);
    if (!client.flush(`event:${OAUTH2_TOPIC}\ndata:${message}\n\n`)) this.drop(client, 'slow');
    return true;
  }

  /** This node's clients as pb_hooks' `$app.subscriptionsBroker()` lists them: topics, and whom they subscribe as. */
  brokerClients(): Array<{ id: string; subscriptions: string[]; auth: { collectionId?: string; id?: string } | null }> {
    return [...this.clients.values()]
      .filter((c) => !c.closed)
      .map((client) => {
        const auth = this.identities.of(client)?.auth;
        const topics = this.audiences.of(client).map((s) => s.topic);
        if (this.oauth2.has(client)) topics.push(OAUTH2_TOPIC);
        return { id: client.id, subscriptions: topics, auth: auth && auth.type !== 'guest' ? { collectionId: auth.type === 'record' ? auth.collectionId : '_superusers', id: auth.id } : null };
      });
  }

  /**
   * A message of a hook's own to a client of this node (PocketBase's `client.send(message)`); false
   * when there is no such client. The name is one line; the data goes as `data:` lines.
   */
  sendTo(clientId: string, name: string, data: string): boolean {
    const client = this.clients.get(clientId);
    if (!client || client.closed) return false;
    const event = name.replace(/[\r\n]/g, '');
    const lines = data.split(/\r\n|\r|\n/).map((line) => `data:${line}\n`).join('');
    if (!client.flush(`event:${event}\n${lines}\n`)) this.drop(client, 'slow');
    return true;
  }

  /** Ends a client's stream (PocketBase's `client.discard()`); it connects again as after any end. */
  discard(clientId: string): void {
    const client = this.clients.get(clientId);
    if (client) this.drop(client, 'expired');
  }

  private drop(client: RealtimeClient, reason: DropReason): void {
    if (client.closed) return;
    this.log.info({ clientId: client.id, reason }, 'realtime client dropped');
    // A client that does not read cannot take a graceful end either.
    if (reason === 'slow') client.stream.destroy();
    else client.stream.end();
    this.disconnected(client);
  }

  private ping(idleMs: number): void {
    const now = Date.now();
    const max = this.o.limits.maxConnectionMs;
    for (const client of [...this.clients.values()]) {
      if (max > 0 && now - client.connectedAt >= max) this.drop(client, 'expired');
      else if (now - client.lastWrite >= idleMs && !client.flush(':\n\n')) this.drop(client, 'slow');
    }
  }

  /**
   * Stops: no more changes or clients, every stream ended (clients reconnect to the next server), and
   * those that do not take their end within a second closed outright, so shutdown never waits on them.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.stopFeed?.();
    await this.directory.close();
    clearInterval(this.keepAlive);
    await this.broadcaster.stop();
    if (this.clients.size === 0) return;
    const gone = new Promise<void>((resolve) => (this.allGone = resolve));
    const streams = [...this.clients.values()].map((c) => c.stream);
    for (const stream of streams) stream.end();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([gone, new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_GRACE_MS)))]);
    clearTimeout(timer);
    for (const client of [...this.clients.values()]) {
      client.stream.destroy();
      this.disconnected(client);
    }
  }
}
