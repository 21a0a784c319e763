// PocketBase's own benchmark (github.com/pocketbase/benchmarks), restated for Cairn: the same schema,
// volumes, request counts, concurrency, rules and queries, written from reading theirs. Each scenario
// id is the key of PocketBase's published time in published.ts.

export const POSTS_QUICK = ['posts10k'] as const;
export const POSTS_FULL = ['posts10k', 'posts25k', 'posts50k', 'posts100k'] as const;

/** Rows of each posts collection: created half without a rule, half with one. */
export function postsVolume(collection: string): number {
  return Number(/^posts(\d+)k$/.exec(collection)![1]) * 1000;
}

const OPEN = { listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };

/** The collections in Cairn's collection format, in creation order (users is Cairn's own, extended). */
export function schema(posts: readonly string[]): { create: Record<string, unknown>[]; users: (existing: { fields: unknown[] }) => Record<string, unknown> } {
  return {
    create: [
      { name: 'organizations', type: 'base', fields: [{ name: 'name', type: 'text' }], ...OPEN },
      { name: 'permissions', type: 'base', fields: [{ name: 'name', type: 'text' }, { name: 'active', type: 'bool' }], ...OPEN },
      ...posts.map((name) => ({
        name,
        type: 'base',
        fields: [
          { name: 'title', type: 'text' },
          { name: 'description', type: 'editor' },
          { name: 'public', type: 'bool' },
          { name: 'type', type: 'select', options: { values: ['a', 'b', 'c', 'd'], maxSelect: 3 } },
          { name: 'author', type: 'relation', options: { toCollection: 'users', cascadeDelete: true } },
        ],
        ...OPEN,
      })),
    ],
    users: (existing) => ({
      fields: [
        ...existing.fields,
        { name: 'username', type: 'text', required: true, options: { min: 3, max: 150 } },
        { name: 'organization', type: 'relation', required: true, options: { toCollection: 'organizations', cascadeDelete: true } },
        { name: 'permissions', type: 'relation', options: { toCollection: 'permissions', cascadeDelete: true, maxSelect: null } },
      ],
      listRule: "@request.auth.id != ''",
      viewRule: '',
      createRule: '',
      updateRule: '',
      deleteRule: '',
    }),
  };
}

export const DESCRIPTION =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit. Donec sit amet sodales nisl, quis pretium nunc. Suspendisse vel auctor velit, sed luctus lectus. ' +
  'Phasellus rhoncus imperdiet feugiat. Duis et laoreet felis, ut facilisis enim. Quisque aliquet aliquam magna eget eleifend. Duis sed tellus nibh. ' +
  'Nunc ac lacus auctor, scelerisque magna congue, euismod purus. Fusce sollicitudin pharetra egestas. Quisque pulvinar augue nec aliquam placerat. Suspendisse dapibus ornare sodales.';

/** A create scenario: `count` records at `concurrency`, then the same under `rule`. */
export interface CreateStep {
  collection: string;
  count: number;
  concurrency: number;
  rule: string;
  /** Whether the requests carry a user's token (the posts' rule asks for one). */
  asUser?: boolean;
}

export function createSteps(posts: readonly string[]): CreateStep[] {
  const pair = (collection: string, count: number, concurrency: number, rule: string, asUser = false): CreateStep[] => [
    { collection, count, concurrency, rule: '' },
    { collection, count, concurrency, rule, asUser },
  ];
  return [
    ...pair('organizations', 50, 10, "@request.body.name != ''"),
    ...pair('permissions', 25, 5, "@request.body.name != ''"),
    ...pair('users', 250, 50, "@request.body.email != '' && @request.body.permissions:length > 0"),
    ...posts.flatMap((c) => pair(c, postsVolume(c) / 2, 500, "@request.auth.id != '' && @request.body.public:isset = true", true)),
  ];
}

export function createId(step: CreateStep): string {
  return `create ${step.collection}${step.rule ? ' rule' : ''}`;
}

/** A list scenario on a posts collection: the collection's list rule and indexes while it runs. */
export interface ListStep {
  id: string;
  label: string;
  iterations: number;
  concurrency: number;
  query: string;
  rule: string;
  index?: 'author' | 'description';
  /** PocketBase's mixed read/write scenario: 300 updates of random records at once beside the lists. */
  updates?: number;
}

export function listSteps(): ListStep[] {
  const many = (id: string, label: string, concurrency: number, query: string, updates?: number): ListStep => ({ id, label, iterations: 1000, concurrency, query, rule: '', updates });
  const few = (id: string, label: string, query: string, rule = '', index?: ListStep['index']): ListStep => ({ id, label, iterations: 100, concurrency: 10, query, rule, index });
  const page = '?perPage=20';
  const skip = '?perPage=20&skipTotal=1';
  return [
    many('list-a', 'list, one client', 1, page),
    many('list-b', 'list, 1,000 clients', 1000, page),
    many('list-c', 'list, 1,000 clients, skipTotal', 1000, skip),
    many('mixed', 'list, 1,000 clients, 300 updates beside', 1000, page, 300),
    few('expand-author', 'expand author', `${page}&expand=author`),
    few('expand-author-fields', 'expand author, fields', `${page}&expand=author&fields=id,collectionId,expand.author.id`),
    few('expand-perms', 'expand author.permissions', `${page}&expand=author.permissions`),
    few('expand-perms-fields', 'expand author.permissions, fields', `${page}&expand=author.permissions&fields=id,collectionId,expand.author.id,expand.author.expand.permissions.id`),
    few('auth-rule', "rule @request.auth.id != ''", page, "@request.auth.id != ''"),
    few('author', 'rule author = me (PocketBase: no index)', page, 'author = @request.auth.id'),
    few('author-index', 'rule author = me, index', page, 'author = @request.auth.id', 'author'),
    few('author-index-skip', 'rule author = me, index, skipTotal', skip, 'author = @request.auth.id', 'author'),
    few('author-id', 'rule author.id = me (PocketBase: no index)', page, 'author.id = @request.auth.id'),
    few('author-id-index', 'rule author.id = me, index', page, 'author.id = @request.auth.id', 'author'),
    few('author-id-index-skip', 'rule author.id = me, index, skipTotal', skip, 'author.id = @request.auth.id', 'author'),
    few('like', "rule description ~ 'ipsum dolor'", page, "description ~ 'ipsum dolor'"),
    few('like-index', "rule description ~ …, index", page, "description ~ 'ipsum dolor'", 'description'),
    few('like-index-skip', "rule description ~ …, index, skipTotal", skip, "description ~ 'ipsum dolor'", 'description'),
    few('each-all', "rule type:each != 'c'", page, "type:each != 'c'"),
    few('each-all-skip', "rule type:each != 'c', skipTotal", skip, "type:each != 'c'"),
    few('each-any', "rule type:each ?!= 'c'", page, "type:each ?!= 'c'"),
    few('each-any-skip', "rule type:each ?!= 'c', skipTotal", skip, "type:each ?!= 'c'"),
    few('nested-single', "rule author.organization.name != 'test'", page, "author.organization.name != 'test'"),
    few('nested-single-skip', "rule author.organization.name != 'test', skipTotal", skip, "author.organization.name != 'test'"),
    few('nested-all', 'rule author.permissions.active = true', page, 'author.permissions.active = true'),
    few('nested-all-skip', 'rule author.permissions.active = true, skipTotal', skip, 'author.permissions.active = true'),
    few('nested-any', 'rule author.permissions.active ?= true', page, 'author.permissions.active ?= true'),
    few('nested-any-skip', 'rule author.permissions.active ?= true, skipTotal', skip, 'author.permissions.active ?= true'),
  ];
}

/** PocketBase's index statements for the "with index" scenarios, in its own quoting (backticks). */
export function indexStatement(collection: string, index: ListStep['index']): string[] {
  if (index === 'author') return [`create index \`idx_author_${collection}\` on ${collection} (author)`];
  if (index === 'description') return [`create index \`idx_descriptions_${collection}\` on ${collection} (description)`];
  return [];
}
