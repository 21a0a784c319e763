import type { RealtimeClient } from './client.ts';
import type { Identity } from './identity.ts';
import type { Topic, TopicOptions } from './topics.ts';

/** One topic of one client. */
export interface Subscription {
  client: RealtimeClient;
  /** The topic as subscribed: the event name of its messages. */
  topic: string;
  audience: Audience;
}

/**
 * Subscriptions that get the same message for a change: same identity, same rule (`list` for a
 * collection's topics, `view` for one record's) and same options. One evaluation serves them all.
 */
export class Audience {
  private readonly subscriptions = new Set<Subscription>();
  private list?: readonly Subscription[];

  /**
   * The subscriptions as a list that is never changed (a new one after each join or leave): what a
   * change received now is sent to, kept by the broadcaster without a copy per change.
   */
  get members(): readonly Subscription[] {
    return (this.list ??= [...this.subscriptions]);
  }

  join(subscription: Subscription): void {
    this.subscriptions.add(subscription);
    this.list = undefined;
  }

  leave(subscription: Subscription): void {
    this.subscriptions.delete(subscription);
    this.list = undefined;
  }

  get size(): number {
    return this.subscriptions.size;
  }

  constructor(
    readonly key: string,
    readonly bucket: string,
    readonly identity: Identity,
    readonly action: 'list' | 'view',
    readonly options: TopicOptions,
  ) {}
}

function bucketOf(database: string, collection: string, recordId: string | undefined): string {
  // Collections match by id or by name in any case, as names are matched elsewhere; ids are lower case.
  return `${database}\n${collection.toLowerCase()}\n${recordId ?? '*'}`;
}

/** Every subscription, by database, collection (as written in the topic) and record. */
export class Audiences {
  private readonly buckets = new Map<string, Map<string, Audience>>();
  private readonly byClient = new Map<RealtimeClient, readonly Subscription[]>();

  /** A client's subscriptions, in the order of its last subscription request. */
  of(client: RealtimeClient): readonly Subscription[] {
    return this.byClient.get(client) ?? [];
  }

  /** `next` becomes the client's subscriptions; those it no longer holds leave their audiences. */
  replace(client: RealtimeClient, next: readonly Subscription[]): void {
    const staying = new Set(next);
    for (const s of this.of(client)) if (!staying.has(s)) this.remove(s);
    if (next.length > 0) this.byClient.set(client, next);
    else this.byClient.delete(client);
  }

  add(client: RealtimeClient, topic: Topic, identity: Identity): Subscription {
    const bucket = bucketOf(identity.dbName, topic.collection, topic.recordId);
    const action = topic.recordId === undefined ? 'list' : 'view';
    const key = `${identity.key}\n${topic.options.key}`;
    let audiences = this.buckets.get(bucket);
    if (!audiences) this.buckets.set(bucket, (audiences = new Map()));
    let audience = audiences.get(key);
    if (!audience) audiences.set(key, (audience = new Audience(key, bucket, identity, action, topic.options)));
    const subscription: Subscription = { client, topic: topic.name, audience };
    audience.join(subscription);
    return subscription;
  }

  remove(subscription: Subscription): void {
    const audience = subscription.audience;
    audience.leave(subscription);
    if (audience.size > 0) return;
    const audiences = this.buckets.get(audience.bucket);
    if (audiences?.get(audience.key) === audience) audiences.delete(audience.key);
    if (audiences?.size === 0) this.buckets.delete(audience.bucket);
  }

  /** The audiences of a change to one record: its collection's topics (by id or name) and its own. */
  find(database: string, collectionId: string, collectionName: string, recordId: string): Audience[] {
    const out: Audience[] = [];
    const names = collectionId.toLowerCase() === collectionName.toLowerCase() ? [collectionId] : [collectionId, collectionName];
    for (const name of names) {
      for (const record of [undefined, recordId]) {
        const audiences = this.buckets.get(bucketOf(database, name, record));
        if (audiences) out.push(...audiences.values());
      }
    }
    return out;
  }
}
