import { useState } from 'preact/hooks';
import { api, messageOf, type Page } from '../api.ts';
import { formatDate } from '../ui/format.ts';
import { useLoad } from '../ui/hooks.ts';
import { Badge, Button, Empty, ErrorBox, Loading, PageHeader, Pagination, TextField } from '../ui/kit.tsx';

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
  const [filterText, setFilterText] = useState('');
  const [filter, setFilter] = useState('');
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<string>();
  const list = useLoad(() => api<Page<RequestLog>>('GET', '/api/logs', { ...instance, query: { page, perPage: 50, filter, sort: '-created' } }), [page, filter]);
  const stats = useLoad(() => api<Array<{ total: number; date: string }>>('GET', '/api/logs/stats', { ...instance, query: { filter } }), [filter]);
  const perHour = stats.data ?? [];
  const peak = Math.max(1, ...perHour.map((s) => s.total));
  return (
    <>
      <PageHeader title="Request logs" subtitle="Every API request: who called, what it answered and how long it took. Headers, bodies and credentials are never recorded.">
        <Button onClick={() => { list.reload(); stats.reload(); }}>Refresh</Button>
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
          label="Filter logs"
          class="grow mono-input"
          value={filterText}
          onValue={setFilterText}
          placeholder='e.g. status >= 400 && url ~ "/api/collections"'
          hint="Names: status, method, url, auth, authId, database, userIp, execTime, created, level."
          error={filter && list.error ? messageOf(list.error) : undefined}
        />
        <div class="toolbar-buttons">
          <Button type="submit">Apply filter</Button>
        </div>
      </form>
      {perHour.length > 0 && (
        <figure class="sparkline card" aria-label={`Requests per hour, ${perHour.length} hour(s), at most ${peak}`}>
          {perHour.slice(-72).map((s) => (
            <span key={s.date} style={{ height: `${Math.max(4, (s.total / peak) * 100)}%` }} title={`${formatDate(s.date)}: ${s.total}`} />
          ))}
        </figure>
      )}
      {!filter && <ErrorBox error={list.error} />}
      {list.loading && !list.data ? (
        <Loading />
      ) : list.data?.items.length === 0 ? (
        <Empty title={filter ? 'No request matches this filter.' : 'No requests logged yet.'} />
      ) : (
        list.data && (
          <>
            <div class="table-wrap">
              <table class="table">
                <caption class="sr-only">Request logs</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Status</th>
                    <th scope="col">Request</th>
                    <th scope="col">Caller</th>
                    <th scope="col">Time</th>
                    <th scope="col">
                      <span class="sr-only">Details</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.items.map((log) => [
                    <tr key={log.id}>
                      <td class="nowrap small">{formatDate(log.created)}</td>
                      <td>
                        <Badge tone={log.data.status >= 500 ? 'danger' : log.data.status >= 400 ? 'warning' : 'success'}>{log.data.status}</Badge>
                      </td>
                      <td class="truncate-cell">
                        <span class="mono small">
                          {log.data.method} {log.data.url}
                        </span>
                        {log.data.error && <div class="small error-text">{log.data.error}</div>}
                      </td>
                      <td class="small">
                        {log.data.auth}
                        {log.data.database && <span class="muted"> · {log.data.database}</span>}
                      </td>
                      <td class="nowrap small">{log.data.execTime} ms</td>
                      <td class="row-actions">
                        <Button small variant="ghost" aria-expanded={open === log.id} onClick={() => setOpen(open === log.id ? undefined : log.id)} aria-label={`Details of request ${log.id}`}>
                          {open === log.id ? 'Hide' : 'Details'}
                        </Button>
                      </td>
                    </tr>,
                    open === log.id && (
                      <tr key={`${log.id}-details`}>
                        <td colSpan={6}>
                          <pre class="code">{JSON.stringify(log.data, null, 2)}</pre>
                        </td>
                      </tr>
                    ),
                  ])}
                </tbody>
              </table>
            </div>
            <Pagination page={list.data.page} totalPages={list.data.totalPages} totalItems={list.data.totalItems} onPage={setPage} what="requests" />
          </>
        )
      )}
    </>
  );
}
