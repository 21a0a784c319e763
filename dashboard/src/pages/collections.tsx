import { api, type Page } from '../api.ts';
import type { Collection } from '../model.ts';
import { useLoad } from '../ui/hooks.ts';
import { Badge, Empty, ErrorBox, Loading, PageHeader } from '../ui/kit.tsx';

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
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading />
      ) : list.data && list.data.length === 0 ? (
        <Empty title="No collections yet.">
          <a class="btn btn-primary" href="#/collections/new">
            Create the first collection
          </a>
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="table">
            <caption class="sr-only">Collections</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Fields</th>
                <th scope="col">List</th>
                <th scope="col">View</th>
                <th scope="col">Triggers</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data?.map((c) => (
                <tr key={c.id}>
                  <th scope="row">
                    <a href={`#/collections/${encodeURIComponent(c.name)}`} class="strong">
                      {c.name}
                    </a>
                    {c.system && <Badge>system</Badge>}
                  </th>
                  <td>
                    <Badge tone={c.type === 'auth' ? 'info' : c.type === 'view' ? 'warning' : 'neutral'}>{c.type}</Badge>
                  </td>
                  <td>{c.fields.length}</td>
                  <td>{ruleSummary(c.listRule)}</td>
                  <td>{ruleSummary(c.viewRule)}</td>
                  <td>{c.options.triggers?.length ?? 0}</td>
                  <td class="row-actions">
                    <a class="btn btn-small btn-ghost" href={`#/collections/${encodeURIComponent(c.name)}/edit`} aria-label={`Edit collection ${c.name}`}>
                      Edit
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
