import { api, type Page } from '../api.ts';
import type { Collection } from '../model.ts';
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

export function CollectionsPage() {
  const list = useCollections();
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
                <a href={`#/collections/${encodeURIComponent(c.name)}`} class="strong">
                  {c.name}
                </a>{' '}
                {c.system && <Badge>system</Badge>}
              </>
            ),
          },
          { id: 'type', label: 'Type', sort: (c) => c.type, cell: (c) => <Badge tone={c.type === 'auth' ? 'info' : c.type === 'view' ? 'warning' : 'neutral'}>{c.type}</Badge> },
          { id: 'fields', label: 'Fields', sort: (c) => c.fields.length, cell: (c) => c.fields.length },
          { id: 'list', label: 'List', cell: (c) => ruleSummary(c.listRule) },
          { id: 'view', label: 'View', cell: (c) => ruleSummary(c.viewRule) },
          { id: 'triggers', label: 'Triggers', cell: (c) => c.options.triggers?.length ?? 0 },
        ]}
        actions={(c) => [{ label: 'Edit', href: `#/collections/${encodeURIComponent(c.name)}/edit`, variant: 'ghost' }]}
      />
    </>
  );
}
