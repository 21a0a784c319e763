import type { Collection } from '../../collections/model.ts';
import type { CollectionSet } from '../../collections/service.ts';
import type { NameScope } from './request-ref.ts';

/** The names rules and filters are checked against, for a collection of `collections`. */
export function scopeOf(collection: Collection, collections: CollectionSet): NameScope {
  return {
    collection,
    authCollections: collections.list.filter((c) => c.type === 'auth'),
    lookup: (name) => collections.find(name),
  };
}
