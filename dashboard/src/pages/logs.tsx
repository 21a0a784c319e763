import { useState } from 'preact/hooks';
import { api, type Page } from '../api.ts';
import { formatDate } from '../ui/format.ts';
import { useLoad } from '../ui/hooks.ts';
import { Badge, Button, PageHeader } from '../ui/kit.tsx';
import { DataList, FilterForm } from '../ui/list.tsx';

interface RequestLog {
  id: string;
  created: string;
  level: number;
  message: string;
  data: {
    method: string;
    url: string;
    status: number;
    execTime: number;
    auth: string;
    authId: string;
    database: string;
    userIp: string;
    remoteIp: string;
    userAgent: string;
    referer: string;
    error?: string;
  };
}

const instance = { db: false } as const;

/** The request log (PocketBase v0.22's /api/logs): filter in the rule language, newest first. */
export function LogsPage() {
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState('-created');
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<string>();
  const list = useLoad(() => api<Page<RequestLog>>('GET', '/api/logs', { ...instance, query: { page, perPage: 50, filter, sort } }), [page, filter, sort]);
  const stats = useLoad(() => api<Array<{ total: number; date: string }>>('GET', '/api/logs/stats', { ...instance, query: { filter } }), [filter]);
  const perHour = stats.data ?? [];
  const peak = Math.max(1, ...perHour.map((s) => s.total));
  return (
    <>
      <PageHeader title="Request logs" subtitle="Every API request: who called, what it answered and how long it took. Headers, bodies and credentials are never recorded.">
        <Button onClick={() => { list.reload(); stats.reload(); }}>Refresh</Button>
      </PageHeader>
      <FilterForm
        label="Filter logs"
        filter={filter}
        onFilter={(f) => {
          setPage(1);
          setFilter(f);
        }}
        loadError={list.error}
        placeholder='e.g. status >= 400 && url ~ "/api/collections"'
        hint="Names: status, method, url, auth, authId, database, userIp, execTime, created, level."
      />
      {perHour.length > 0 && (
        <figure class="sparkline card" role="img" aria-label={`Requests per hour, ${perHour.length} hour(s), at most ${peak}`}>
          {perHour.slice(-72).map((s) => (
            <span key={s.date} style={{ height: `${Math.max(4, (s.total / peak) * 100)}%` }} title={`${formatDate(s.date)}: ${s.total}`} />
          ))}
        </figure>
      )}
      <DataList
        caption="Request logs"
        load={list}
        showLoadError={!filter}
        rowKey={(log) => log.id}
        empty={filter ? 'No request matches this filter.' : 'No requests logged yet.'}
        sort={sort}
        onSort={(s) => {
          setSort(s);
          setPage(1);
        }}
        onPage={setPage}
        what="requests"
        columns={[
          { id: 'created', label: 'When', class: 'nowrap small', sort: true, cell: (log) => formatDate(log.created) },
          { id: 'status', label: 'Status', sort: true, cell: (log) => <Badge tone={log.data.status >= 500 ? 'danger' : log.data.status >= 400 ? 'warning' : 'success'}>{log.data.status}</Badge> },
          {
            id: 'request',
            label: 'Request',
            class: 'truncate-cell',
            cell: (log) => (
              <>
                <span class="mono small">
                  {log.data.method} {log.data.url}
                </span>
                {log.data.error && <div class="small error-text">{log.data.error}</div>}
              </>
            ),
          },
          { id: 'caller', label: 'Caller', class: 'small', cell: (log) => <>{log.data.auth}{log.data.database && <span class="muted"> · {log.data.database}</span>}</> },
          { id: 'execTime', label: 'Time', class: 'nowrap small', sort: true, cell: (log) => `${log.data.execTime} ms` },
        ]}
        actions={(log) => [
          { label: open === log.id ? 'Hide' : 'Details', name: `${open === log.id ? 'Hide' : 'Show'} details of request ${log.id}`, variant: 'ghost', expanded: open === log.id, onClick: () => setOpen(open === log.id ? undefined : log.id) },
        ]}
        details={(log) => (open === log.id ? <pre class="code">{JSON.stringify(log.data, null, 2)}</pre> : undefined)}
      />
    </>
  );
}
