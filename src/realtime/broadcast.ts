import type { Collection } from '../collections/model.ts';
import type { CollectionSet } from '../collections/service.ts';
import type { Auth, RequestContext } from '../context.ts';
import { isApiError } from '../errors.ts';
import type { Logger } from '../lib/logger.ts';
import type { RecordDeps } from '../records/deps.ts';
import { finishRecords } from '../records/read.ts';
import { type RecordJson, seesAsAdministrator, serializeRecord, type Viewer } from '../records/serialize.ts';
import { type RecordShape, shapeOf } from '../records/shape.ts';
import { rowOfRecord, snapshotMeets } from '../records/snapshot.ts';
import { PRIVILEGED_VIEWER, viewerOf } from '../records/viewer.ts';
import { compileFilter, FilterError } from '../rules/index.ts';
import { type Database, type DatabaseRegistry, type Row, type Sql, sql } from '../storage/index.ts';
import type { Audience, Audiences, Subscription } from './audiences.ts';
import { type DropReason, type RealtimeClient, SharedPayload } from './client.ts';
import type { RecordChange } from './feed.ts';
import type { Identity } from './identity.ts';
import type { RealtimeHooks } from './app-hooks.ts';

/** Changes waiting to be sent before the server counts itself overloaded (see `receive`). */
export const MAX_BACKLOG = 10_000;

/**
 * Changes decided per turn of the event loop at most, and clients written to per turn at most. Each
 * bounds how long the fan-out holds the event loop at once (a write to a client's socket costs a few
 * microseconds of system time, so a slice of 100 is well under a millisecond), so that requests are
 * answered between two slices whatever the number of subscribers.
 */
export const CHANGES_PER_TURN = 100;
export const WRITES_PER_TURN = 100;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface BroadcasterDeps {
  registry: DatabaseRegistry;
  /** The records domain's collections and access rules: messages are decided as a view is. */
  records: RecordDeps;
  audiences: Audiences;
  /** The caller behind an identity's credentials now; rejects with a 401 when they no longer hold. */
  authenticate(identity: Identity): Promise<Auth>;
  drop(client: RealtimeClient, reason: DropReason): void;
  /** Every client is dropped: the server fell too far behind to send what they missed. */
  overloaded(): void;
  log(): Logger;
  /** Application hooks that see each message (onRealtimeMessageSend). */
  hooks?: () => RealtimeHooks | undefined;
}

/** A parameter list as text, to recognise the same bound condition twice. */
function paramsKey(params: readonly unknown[]): string {
  return params.map((p) => (typeof p === 'string' ? `s${p}` : typeof p === 'object' && p !== null ? `o${JSON.stringify(p)}` : `${typeof p}${String(p)}`)).join('\u0000');
}

/** What one batch of changes shares: identities re-checked once. */
class Batch {
  readonly checked = new Map<Identity, Promise<Auth | undefined>>();
}

/**
 * A change and who follows it, taken when it is received (at its commit, before the write is
 * answered, for this node's writes): a client that subscribes once the write has answered does not
 * get it, and one that unsubscribes then still does, as PocketBase decides its recipients.
 */
interface Received {
  change: RecordChange;
  audiences: Array<{ audience: Audience; subscriptions: readonly Subscription[] }>;
}

/**
 * Sends committed changes to the clients whose subscriptions they match, as each client would see the
 * record from a view. The work runs after the requests that made the changes, in two stages that
 * each take a bounded slice of a turn of the event loop and let requests in between:
 *
 * - deciding: changes are taken in batches (what arrived since the last batch, `CHANGES_PER_TURN` at
 *   most), each change rendered once per audience and its frame queued on every matching client;
 * - writing: clients with queued frames are written to in the order they got them,
 *   `WRITES_PER_TURN` per turn, each with everything it queued until its turn in one write.
 *
 * So a create never waits behind a thousand socket writes, and under load a client's write carries
 * more messages instead of the server making more writes. Changes are decided in the order they came
 * and each client's frames are written in the order they were queued: a record's events keep their
 * commit order at every client.
 */
export class Broadcaster {
  private queue: Received[] = [];
  private deciding?: Promise<void>;
  /** Clients with queued frames, oldest first. */
  private readonly dirty = new Set<RealtimeClient>();
  private writing?: Promise<void>;
  private stopped = false;

  constructor(private readonly deps: BroadcasterDeps) {}

  /** The feed's listener. Changes that nobody on this node follows are dropped at once. */
  readonly receive = (change: RecordChange): void => {
    if (this.stopped) return;
    const audiences = this.deps.audiences.find(change.database, change.collectionId, change.collectionName, change.recordId);
    if (audiences.length === 0) return;
    this.queue.push({ change, audiences: audiences.map((audience) => ({ audience, subscriptions: audience.members })) });
    if (this.queue.length > MAX_BACKLOG) {
      // Sending would lag ever further behind: every client is dropped (they reconnect, as after any
      // dropped connection) rather than memory growing without bound.
      this.queue = [];
      this.deps.log().warn({ backlog: MAX_BACKLOG }, 'realtime fell too far behind; every client dropped');
      this.deps.overloaded();
      return;
    }
    this.deciding ??= this.decide();
  };

  /** Stops taking changes and waits for the work under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queue = [];
    await this.deciding;
    this.dirty.clear();
    await this.writing;
  }

  private async decide(): Promise<void> {
    while (this.queue.length > 0 && !this.stopped) {
      // The changes committed in this turn of the event loop (one group commit) make the first batch.
      await nextTurn();
      const changes = this.queue.length <= CHANGES_PER_TURN ? this.queue : this.queue.slice(0, CHANGES_PER_TURN);
      this.queue = changes === this.queue ? [] : this.queue.slice(CHANGES_PER_TURN);
      await this.send(changes);
    }
    this.deciding = undefined;
  }

  private async send(changes: Received[]): Promise<void> {
    const batch = new Batch();
    for (const { change, audiences } of changes) {
      try {
        await this.deliver(change, audiences, batch);
      } catch (err) {
        // One change that cannot be evaluated (its database closing, a broken rule) is skipped.
        this.deps.log().error({ err, database: change.database, collection: change.collectionName, recordId: change.recordId }, 'realtime change not sent');
      }
    }
    if (this.dirty.size > 0) this.writing ??= this.write();
  }

  private async write(): Promise<void> {
    while (this.dirty.size > 0) {
      await nextTurn();
      const shared = new SharedPayload();
      let n = 0;
      for (const client of this.dirty) {
        // Deleted before the write: frames queued after it make the client dirty again, at the end.
        this.dirty.delete(client);
        if (!client.flush(undefined, shared)) this.deps.drop(client, 'slow');
        if (++n === WRITES_PER_TURN) break;
      }
    }
    this.writing = undefined;
  }

  private async deliver(change: RecordChange, audiences: Received['audiences'], batch: Batch): Promise<void> {
    const db = this.deps.registry.opened(change.database) ?? (await this.deps.registry.get(change.database).catch(() => undefined));
    if (!db) return;
    const collections = await this.deps.records.collections.all(db);
    const collection = collections.find(change.collectionId);
    if (!collection || collection.type === 'view') return;
    const shape = shapeOf(collection);
    // The record's values when its row is not there to read: a delete's last state, or a create or
    // update made here and deleted again since (its message still goes, before the delete's).
    let snapshot: RecordJson | undefined = change.action === 'delete' ? change.deleted : undefined;
    let row: Row | undefined;
    if (snapshot) row = rowOfRecord(shape, snapshot);
    else {
      // Read now, committed: a node that did not make the write has nothing else to go on. A record
      // another node made and deleted since is left to its delete event.
      row = await db.get<Row>(shape.selectById, [change.recordId]);
      if (!row && change.record) {
        snapshot = change.record;
        row = rowOfRecord(shape, snapshot);
      }
    }
    if (!row) return;

    const messages = new ChangeMessages(this.deps.records, change, db, collections, collection, shape, row, snapshot);
    for (const { audience, subscriptions } of audiences) {
      const auth = await this.check(audience.identity, batch);
      if (!auth || subscriptions.length === 0) continue;
      let message: string | undefined;
      try {
        message = await messages.for(audience, auth);
      } catch (err) {
        // One receiver's rendering (an enrich hook that throws, say) does not hold back the others.
        this.deps.log().error({ err, collection: collection.name, record: change.recordId }, 'realtime: rendering a record for a subscriber failed; it gets no message');
        continue;
      }
      if (message === undefined) continue;
      // One frame per topic, its bytes shared by every client subscribed to it: no id line, which
      // would differ per client (an EventSource keeps PB_CONNECT's id as its last event id anyway).
      const hooks = this.deps.hooks?.();
      if (hooks?.realtimeMessages()) {
        // Each client's message passes the hooks on its own (they may change or drop it).
        for (const s of subscriptions) {
          let out: { name: string; data: string } | undefined;
          try {
            out = await hooks.realtimeMessage(s.client.id, auth, s.topic, message);
          } catch (err) {
            this.deps.log().error({ err, clientId: s.client.id }, 'realtime: a message hook failed; the client gets no message');
            continue;
          }
          if (!out || s.client.closed) continue;
          s.client.queue(Buffer.from(`event:${out.name}\ndata:${out.data}\n\n`));
          this.dirty.add(s.client);
        }
        continue;
      }
      const frames = new Map<string, Buffer>();
      for (const s of subscriptions) {
        if (s.client.closed) continue;
        let frame = frames.get(s.topic);
        if (!frame) frames.set(s.topic, (frame = Buffer.from(`event:${s.topic}\ndata:${message}\n\n`)));
        s.client.queue(frame);
        this.dirty.add(s.client);
      }
    }
  }

  /** The identity's caller now, once per batch; clients of credentials that no longer hold are dropped. */
  private check(identity: Identity, batch: Batch): Promise<Auth | undefined> {
    let checked = batch.checked.get(identity);
    if (!checked) {
      checked = this.deps.authenticate(identity).then(
        (auth) => {
          identity.auth = auth;
          return auth;
        },
        (err: unknown) => {
          if (isApiError(err) && err.status === 401) {
            for (const client of [...identity.clients]) this.deps.drop(client, 'unauthorized');
          } else {
            this.deps.log().error({ err }, 'realtime identity check failed');
          }
          return undefined;
        },
      );
      batch.checked.set(identity, checked);
    }
    return checked;
  }
}

/**
 * The messages of one change, per audience. Audiences whose access condition binds to the same SQL
 * share one query (guests, and every caller of a rule that does not name `@request`), and those who
 * see the same JSON share one rendering.
 */
class ChangeMessages {
  private readonly visible = new Map<string, Promise<boolean>>();
  private readonly rendered = new Map<string, Promise<string>>();

  constructor(
    private readonly records: BroadcasterDeps['records'],
    private readonly change: RecordChange,
    private readonly db: Database,
    private readonly collections: CollectionSet,
    private readonly collection: Collection,
    private readonly shape: RecordShape,
    private readonly row: Row,
    private snapshot: RecordJson | undefined,
  ) {}

  /** The message data for an audience, or undefined when its caller may not see the record. */
  async for(audience: Audience, auth: Auth): Promise<string | undefined> {
    const { query, headers } = audience.options;
    // The request a view of this record would be, as PocketBase builds it for realtime.
    const ctx: RequestContext = {
      dbName: this.change.database,
      db: this.db,
      auth,
      request: { method: 'GET', headers, query, body: {}, ip: '', context: 'realtime' },
    };
    if (!(await this.allowed(ctx, audience))) return undefined;

    let viewer = viewerOf(ctx, this.records);
    // A manager sees the email of the auth records it manages, as in a view (PocketBase ≥ 0.23).
    if (await this.manages(ctx, viewer)) viewer = { ...viewer, managed: new Set([this.change.recordId]) };
    const expand = query.expand?.trim() ?? '';
    const fields = query.fields?.trim() ?? '';
    // Expanded relations are read under the caller's own rules, and enrich hooks see the receiver, so
    // those renderings differ per audience.
    const enriched = this.records.events?.enriches(this.collection) === true;
    const viewerKey = seesAsAdministrator(this.shape, viewer) ? '*' : `${viewer.privileged}|${viewer.authCollectionId}|${viewer.authRecordId}|${viewer.managed ? 'manages' : ''}`;
    const key = expand === '' && !enriched ? `${viewerKey}\n\n${fields}` : `${audience.key}\n${expand}\n${fields}`;
    let message = this.rendered.get(key);
    if (!message) {
      message = this.render(ctx, viewer, expand, fields, enriched);
      this.rendered.set(key, message);
    }
    return message;
  }

  private async allowed(ctx: RequestContext, audience: Audience): Promise<boolean> {
    let condition: Sql | null;
    try {
      condition = this.records.access.condition(ctx, this.collection, audience.action, this.collections);
      const filter = audience.options.query.filter?.trim() ?? '';
      if (filter !== '') {
        // The subscription's own filter, as PocketBase applies it: under the caller's filter rules.
        const own = compileFilter(filter, this.records.access.filterResolver(ctx, this.collection, this.collections), { dialect: this.db.dialect });
        condition = condition ? sql`(${condition}) AND (${own})` : own;
      }
    } catch (err) {
      // A closed rule (403), or a filter that does not compile: nothing for this audience.
      if (isApiError(err) || err instanceof FilterError) return false;
      throw err;
    }
    return condition ? this.meets(condition) : true;
  }

  private async manages(ctx: RequestContext, viewer: Viewer): Promise<boolean> {
    if (this.collection.type !== 'auth' || seesAsAdministrator(this.shape, viewer)) return false;
    if (viewer.authRecordId === this.change.recordId && viewer.authCollectionId === this.collection.id) return false;
    const condition = this.records.access.manageCondition(ctx, this.collection, this.collections);
    return condition ? this.meets(condition) : false;
  }

  /**
   * Whether the record meets `condition`; one query per condition and parameters for all audiences.
   * Judged on the row the message carries, not on the table: by now the record may have changed
   * again or gone (a delete right after an update), and its message must still go to whom it did then.
   */
  private meets(condition: Sql): Promise<boolean> {
    const key = `${condition.text}\u0001${paramsKey(condition.params)}`;
    let visible = this.visible.get(key);
    if (!visible) {
      this.snapshot ??= serializeRecord(this.row, this.shape, PRIVILEGED_VIEWER);
      visible = snapshotMeets(this.db, this.shape, this.snapshot, condition);
      this.visible.set(key, visible);
    }
    return visible;
  }

  private async render(ctx: RequestContext, viewer: Viewer, expand: string, fields: string, enriched: boolean): Promise<string> {
    const record = serializeRecord(this.row, this.shape, viewer);
    let out: unknown = record;
    if (expand !== '' || fields !== '' || enriched) {
      try {
        [out] = await finishRecords(this.records, ctx, this.collection, [record], { expand, fields });
      } catch (err) {
        // As in PocketBase, options a view would refuse do not stop the message: it goes as it is;
        // unless enrich hooks were to see it (one may refuse this receiver, or hide a key from it).
        if (!isApiError(err) || enriched) throw err;
        out = serializeRecord(this.row, this.shape, viewer);
      }
    }
    return `{"action":"${this.change.action}","record":${JSON.stringify(out)}}`;
  }
}
