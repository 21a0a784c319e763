import { useState } from 'preact/hooks';
import { api, database, type Page } from '../api.ts';
import { type Collection, type FieldDef, type RecordData, recordTitle } from '../model.ts';
import { cellText, formatDate } from '../ui/format.ts';
import { useLoad, useStore } from '../ui/hooks.ts';
import { Badge, Button, ErrorBox, Loading, PageHeader, TextField } from '../ui/kit.tsx';
import { DataList, FilterForm } from '../ui/list.tsx';
import { ImpersonateDialog } from './impersonate.tsx';
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
  const [filter, setFilter] = useState('');
  const [expandText, setExpandText] = useState('');
  const [sort, setSort] = useState('-created');
  const [page, setPage] = useState(1);
  const [perPage, setPerPage] = useState('30');
  const [editing, setEditing] = useState<string | 'new' | undefined>(openId);
  const [impersonating, setImpersonating] = useState<RecordData>();
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
  // The button shows the id; its name says which record it opens in words too.
  const openName = (r: RecordData) => {
    const title = recordTitle(r, collection);
    return title === r.id ? `Open record ${r.id}` : `Open record ${title}, id ${r.id}`;
  };
  const isUsers = collection.type === 'auth';
  const open = (id: string | 'new' | undefined) => {
    setEditing(id);
    const base = location.hash.split('?')[0].replace(/^#/, '');
    history.replaceState(null, '', `#${base}${id && id !== 'new' ? `?record=${id}` : ''}`);
  };


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

      <FilterForm
        label="Filter"
        filter={filter}
        onFilter={(f) => {
          setPage(1);
          setFilter(f);
        }}
        loadError={list.error}
        placeholder={`e.g. ${collection.fields.find((f) => f.type === 'text')?.name ?? 'id'} ~ "word" && created > "2024-01-01"`}
        hint="The rule language: = != > < ~ !~, && ||, relation paths such as author.name."
      >
        {relationNames.length > 0 && (
          <TextField label="Expand" value={expandText} onValue={setExpandText} placeholder={relationNames.join(',')} hint={`Relations: ${relationNames.join(', ')}`} />
        )}
      </FilterForm>

      <DataList
        class="records"
        caption={`Records of ${collection.name}`}
        load={list}
        showLoadError={!filter}
        loadingLabel="Loading records…"
        rowKey={(r) => r.id}
        empty={filter ? 'No record matches this filter.' : 'No records yet.'}
        emptyAction={
          !filter &&
          collection.type !== 'view' && (
            <Button variant="primary" onClick={() => open('new')}>
              Create the first record
            </Button>
          )
        }
        sort={sort}
        onSort={(s) => {
          setPage(1);
          setSort(s);
        }}
        onPage={setPage}
        what="records"
        perPage={{
          value: perPage,
          options: ['10', '30', '100', '500'],
          onValue: (v) => {
            setPerPage(v);
            setPage(1);
          },
        }}
        onRowClick={(r) => open(r.id)}
        rowName={(r) => recordTitle(r, collection)}
        actions={isUsers ? (r) => [{ label: 'Sign in as', onClick: () => setImpersonating(r) }] : undefined}
        columns={columns.map((col) => ({
          id: col.name,
          label: col.name,
          rowHeader: col.name === 'id',
          // Lists (multiple relations, selects, files) have no order the server could sort by.
          sort: !(col.field && ['relation', 'select', 'file'].includes(col.field.type) && col.field.options.maxSelect !== 1) || undefined,
          cell: (r: RecordData) =>
            col.name === 'id' ? (
              <button
                type="button"
                class="link mono"
                onClick={(e) => {
                  e.stopPropagation();
                  open(r.id);
                }}
                aria-label={openName(r)}
              >
                {r.id}
              </button>
            ) : (
              <Cell record={r} name={col.name} field={col.field} />
            ),
        }))}
      />

      {editing !== undefined && (
        <RecordPanel
          collection={collection}
          recordId={editing === 'new' ? undefined : editing}
          onClose={() => open(undefined)}
          onChanged={() => list.reload()}
          onImpersonate={setImpersonating}
        />
      )}
      {impersonating && <ImpersonateDialog collection={collection} record={impersonating} onClose={() => setImpersonating(undefined)} />}
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
