import { useState } from 'preact/hooks';
import { api, database, fieldError, messageOf, type Page } from '../api.ts';
import { type Collection, type FieldDef, type RecordData, recordTitle } from '../model.ts';
import { cellText, formatDate } from '../ui/format.ts';
import { useLoad, useStore } from '../ui/hooks.ts';
import { Badge, Button, Empty, ErrorBox, Loading, PageHeader, Pagination, SelectField, TextField } from '../ui/kit.tsx';
import { RecordPanel } from './record-form.tsx';

const MAX_COLUMNS = 6;

/** The records of one collection: filter, sort, pages, expand, and a side panel to edit one. */
export function RecordsPage({ collection: name, query }: { collection: string; query: URLSearchParams }) {
  const db = useStore(database);
  const collection = useLoad(() => api<Collection>('GET', `/api/collections/${encodeURIComponent(name)}`), [name, db]);
  if (collection.loading && !collection.data) return <Loading />;
  if (!collection.data) {
    return (
      <>
        <PageHeader title={name} />
        <ErrorBox error={collection.error} />
      </>
    );
  }
  return <Browser collection={collection.data} openId={query.get('record') ?? undefined} />;
}

function columnsOf(c: Collection): Array<{ name: string; field?: FieldDef }> {
  const auth = c.type === 'auth' ? [{ name: 'email' }, { name: 'verified' }] : [];
  const own = c.fields.slice(0, MAX_COLUMNS - auth.length).map((f) => ({ name: f.name, field: f }));
  return [{ name: 'id' }, ...auth, ...own, { name: 'created' }];
}

function Browser({ collection, openId }: { collection: Collection; openId?: string }) {
  const [filterText, setFilterText] = useState('');
  const [filter, setFilter] = useState('');
  const [expandText, setExpandText] = useState('');
  const [sort, setSort] = useState('-created');
  const [page, setPage] = useState(1);
  const [perPage, setPerPage] = useState('30');
  const [editing, setEditing] = useState<string | 'new' | undefined>(openId);
  const relationNames = collection.fields.filter((f) => f.type === 'relation').map((f) => f.name);
  const expand = expandText.trim();

  const list = useLoad(
    (signal) =>
      api<Page<RecordData>>('GET', `/api/collections/${encodeURIComponent(collection.name)}/records`, {
        query: { page, perPage, sort, filter, expand },
        signal,
      }),
    [collection.name, page, perPage, sort, filter, expand],
  );
  const columns = columnsOf(collection);
  const isUsers = collection.type === 'auth';
  const open = (id: string | 'new' | undefined) => {
    setEditing(id);
    const base = location.hash.split('?')[0].replace(/^#/, '');
    history.replaceState(null, '', `#${base}${id && id !== 'new' ? `?record=${id}` : ''}`);
  };

  const toggleSort = (col: string) => {
    setPage(1);
    setSort(sort === col ? `-${col}` : col);
  };
  // A bad filter is the likeliest error here: the server's message says where the expression breaks.
  const filterError = filter && list.error ? (fieldError(list.error, 'filter') ?? messageOf(list.error)) : undefined;

  return (
    <>
      <PageHeader
        title={isUsers && collection.name === 'users' ? 'Users' : collection.name}
        subtitle={
          <>
            <Badge tone={collection.type === 'auth' ? 'info' : 'neutral'}>{collection.type}</Badge>{' '}
            <a href={`#/collections/${encodeURIComponent(collection.name)}/edit`}>Edit collection</a>
          </>
        }
      >
        <Button onClick={list.reload} aria-label="Refresh records">
          Refresh
        </Button>
        {collection.type !== 'view' && (
          <Button variant="primary" onClick={() => open('new')}>
            New record
          </Button>
        )}
      </PageHeader>

      <form
        class="toolbar"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setPage(1);
          setFilter(filterText.trim());
        }}
      >
        <TextField
          label="Filter"
          class="grow mono-input"
          value={filterText}
          onValue={setFilterText}
          placeholder={`e.g. ${collection.fields.find((f) => f.type === 'text')?.name ?? 'id'} ~ "word" && created > "2024-01-01"`}
          error={filterError}
          hint="The rule language: = != > < ~ !~, && ||, relation paths such as author.name."
        />
        {relationNames.length > 0 && (
          <TextField label="Expand" value={expandText} onValue={setExpandText} placeholder={relationNames.join(',')} hint={`Relations: ${relationNames.join(', ')}`} />
        )}
        <div class="toolbar-buttons">
          <Button type="submit" variant="secondary">
            Apply filter
          </Button>
          {filter && (
            <Button
              variant="ghost"
              onClick={() => {
                setFilterText('');
                setFilter('');
              }}
            >
              Clear filter
            </Button>
          )}
        </div>
      </form>

      {list.error !== undefined && !filter && <ErrorBox error={list.error} />}
      {list.loading && !list.data ? (
        <Loading label="Loading records…" />
      ) : list.data && list.data.items.length === 0 ? (
        <Empty title={filter ? 'No record matches this filter.' : 'No records yet.'}>
          {!filter && collection.type !== 'view' && (
            <Button variant="primary" onClick={() => open('new')}>
              Create the first record
            </Button>
          )}
        </Empty>
      ) : (
        list.data && (
          <>
            <div class="table-wrap" aria-busy={list.loading ? 'true' : undefined}>
              <table class="table records">
                <caption class="sr-only">Records of {collection.name}</caption>
                <thead>
                  <tr>
                    {columns.map((col) => {
                      const dir = sort === col.name ? 'ascending' : sort === `-${col.name}` ? 'descending' : undefined;
                      const sortable = !(col.field && ((col.field.type === 'relation' || col.field.type === 'select' || col.field.type === 'file') && col.field.options.maxSelect !== 1));
                      return (
                        <th key={col.name} scope="col" aria-sort={dir ?? 'none'}>
                          {sortable ? (
                            <button type="button" class="sort" onClick={() => toggleSort(col.name)} aria-label={`Sort by ${col.name}`}>
                              {col.name}
                              <span aria-hidden="true">{dir === 'ascending' ? ' ▲' : dir === 'descending' ? ' ▼' : ''}</span>
                            </button>
                          ) : (
                            col.name
                          )}
                        </th>
                      );
                    })}
                  </tr>
                </thead>
                <tbody>
                  {list.data.items.map((r) => (
                    <tr key={r.id} class="clickable" onClick={() => open(r.id)}>
                      {columns.map((col) => (
                        <td key={col.name}>
                          {col.name === 'id' ? (
                            <button
                              type="button"
                              class="link mono"
                              onClick={(e) => {
                                e.stopPropagation();
                                open(r.id);
                              }}
                              aria-label={`Open record ${recordTitle(r, collection)}`}
                            >
                              {r.id}
                            </button>
                          ) : (
                            <Cell record={r} name={col.name} field={col.field} />
                          )}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div class="list-foot">
              <SelectField label="Per page" value={perPage} onValue={(v) => { setPerPage(v); setPage(1); }} options={['10', '30', '100', '500']} />
              <Pagination page={list.data.page} totalPages={list.data.totalPages} totalItems={list.data.totalItems} onPage={setPage} what="records" />
            </div>
          </>
        )
      )}

      {editing !== undefined && (
        <RecordPanel
          collection={collection}
          recordId={editing === 'new' ? undefined : editing}
          onClose={() => open(undefined)}
          onChanged={() => list.reload()}
        />
      )}
    </>
  );
}

function Cell({ record, name, field }: { record: RecordData; name: string; field?: FieldDef }) {
  const value = record[name];
  if (name === 'created' || name === 'updated') return <span class="nowrap muted">{formatDate(value)}</span>;
  if (typeof value === 'boolean') return <Badge tone={value ? 'success' : 'neutral'}>{value ? 'yes' : 'no'}</Badge>;
  if (field?.type === 'relation' && record.expand?.[name]) {
    const expanded = record.expand[name];
    const list = Array.isArray(expanded) ? expanded : [expanded];
    return <span class="chips">{list.map((x: RecordData) => <span class="chip" key={x.id}>{recordTitle(x, undefined)}</span>)}</span>;
  }
  if (field?.type === 'file' && value) {
    const list = Array.isArray(value) ? value : [value];
    return <span class="chips">{list.map((f: string) => <span class="chip" key={f}>📎 {f}</span>)}</span>;
  }
  const text = cellText(value);
  return <span class="truncate" title={text}>{text}</span>;
}
