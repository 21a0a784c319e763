import { api, type Page } from '../api.ts';
import { type Collection, SUPERUSERS } from '../model.ts';
import { useLoad } from '../ui/hooks.ts';
import { Badge, PageHeader } from '../ui/kit.tsx';
import { DataList } from '../ui/list.tsx';

export function ruleSummary(rule: string | null): string {
  if (rule === null) return 'admins only';
  if (rule.trim() === '') return 'everyone';
  return 'by rule';
}

export function useCollections() {
  return useLoad(() => api<Page<Collection>>('GET', '/api/collections', { query: { perPage: 500 } }).then((p) => p.items), []);
}

/** Where a collection's row leads: its records, or for `_superusers` the Administrators screen (docs/dashboard.md). */
const recordsHref = (c: Collection) => (c.name === SUPERUSERS ? '#/admins' : `#/collections/${encodeURIComponent(c.name)}`);

export function CollectionsPage() {
  const loaded = useCollections();
  // The system collection of administrators comes last, as PocketBase's own console groups system collections.
  const items = loaded.data && [...loaded.data.filter((c) => c.name !== SUPERUSERS), ...loaded.data.filter((c) => c.name === SUPERUSERS)];
  const list = { ...loaded, data: items };
  return (
    <>
      <PageHeader title="Collections" subtitle="Tables of records, with their fields, access rules and webhook triggers.">
        <a class="btn btn-primary" href="#/collections/new">
          New collection
        </a>
      </PageHeader>
      <DataList
        caption="Collections"
        load={list}
        rowKey={(c) => c.id}
        rowName={(c) => `collection ${c.name}`}
        empty="No collections yet."
        emptyAction={
          <a class="btn btn-primary" href="#/collections/new">
            Create the first collection
          </a>
        }
        columns={[
          {
            id: 'name',
            label: 'Name',
            rowHeader: true,
            sort: (c) => c.name,
            cell: (c) => (
              <>
                <a href={recordsHref(c)} class="strong">
                  {c.name}
                </a>{' '}
                {c.system && <Badge>system</Badge>}
                {c.name === SUPERUSERS && <span class="muted small"> administrators</span>}
              </>
            ),
          },
          { id: 'type', label: 'Type', sort: (c) => c.type, cell: (c) => <Badge tone={c.type === 'auth' ? 'info' : c.type === 'view' ? 'warning' : 'neutral'}>{c.type}</Badge> },
          { id: 'fields', label: 'Fields', sort: (c) => c.fields.length, cell: (c) => c.fields.length },
          { id: 'list', label: 'List', cell: (c) => ruleSummary(c.listRule) },
          { id: 'view', label: 'View', cell: (c) => ruleSummary(c.viewRule) },
          { id: 'triggers', label: 'Triggers', cell: (c) => c.options.triggers?.length ?? 0 },
        ]}
        actions={(c) => [
          c.name === SUPERUSERS
            ? { label: 'Manage', name: 'Manage administrators (_superusers)', href: '#/admins', variant: 'ghost' }
            : { label: 'Edit', href: `#/collections/${encodeURIComponent(c.name)}/edit`, variant: 'ghost' },
        ]}
      />
    </>
  );
}
