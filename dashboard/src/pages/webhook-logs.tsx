import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api.ts';
import { formatDate, fromNow } from '../ui/format.ts';
import { useLoad } from '../ui/hooks.ts';
import { Badge, Button, CheckField, Empty, ErrorBox, Loading, PageHeader, Pagination, SelectField } from '../ui/kit.tsx';
import { notify } from '../ui/overlays.tsx';
import { useCollections } from './collections.tsx';

interface WebhookLog {
  id: string;
  source: 'trigger' | 'cron' | 'workflow';
  name: string;
  collection: string;
  action: string;
  eventId: string;
  url: string;
  method: string;
  attempt: number;
  status: 'success' | 'failed' | 'retrying';
  statusCode: number;
  durationMs: number;
  error: string;
  created: string;
}

const TONE = { success: 'success', failed: 'danger', retrying: 'warning' } as const;

export function WebhookLogsPage() {
  const collections = useCollections();
  const [collection, setCollection] = useState('');
  const [status, setStatus] = useState('');
  const [source, setSource] = useState('');
  const [page, setPage] = useState(1);
  const [live, setLive] = useState(true);
  const [retryError, setRetryError] = useState<unknown>();
  const list = useLoad(() => api<Page<WebhookLog>>('GET', '/api/webhooks/logs', { query: { collection, status, source, page, perPage: 50 } }), [collection, status, source, page]);

  // Deliveries happen in the background: while "live" is on, the first page follows them.
  useEffect(() => {
    if (!live || page !== 1) return;
    const t = setInterval(list.reload, 3000);
    return () => clearInterval(t);
  }, [live, page, list.reload]);

  const retry = async (log: WebhookLog) => {
    setRetryError(undefined);
    try {
      await api('POST', `/api/webhooks/logs/${log.id}/retry`);
      notify('Event queued again; its attempts will show here.');
      list.reload();
    } catch (err) {
      setRetryError(err);
    }
  };

  return (
    <>
      <PageHeader title="Webhook logs" subtitle="Every delivery attempt of triggers, cron jobs and workflow steps, newest first.">
        <CheckField label="Follow new attempts" checked={live} onValue={setLive} switch />
        <Button onClick={list.reload}>Refresh</Button>
      </PageHeader>
      <div class="toolbar">
        <SelectField
          label="Collection"
          value={collection}
          onValue={(v) => {
            setCollection(v);
            setPage(1);
          }}
          options={[{ value: '', label: 'All collections' }, ...(collections.data ?? []).map((c) => ({ value: c.name, label: c.name }))]}
        />
        <SelectField
          label="Status"
          value={status}
          onValue={(v) => {
            setStatus(v);
            setPage(1);
          }}
          options={[
            { value: '', label: 'Any status' },
            { value: 'success', label: 'Success' },
            { value: 'retrying', label: 'Retrying' },
            { value: 'failed', label: 'Failed' },
          ]}
        />
        <SelectField
          label="Source"
          value={source}
          onValue={(v) => {
            setSource(v);
            setPage(1);
          }}
          options={[
            { value: '', label: 'Any source' },
            { value: 'trigger', label: 'Triggers' },
            { value: 'cron', label: 'Cron jobs' },
            { value: 'workflow', label: 'Workflows' },
          ]}
        />
      </div>
      <ErrorBox error={list.error ?? retryError} />
      {list.loading && !list.data ? (
        <Loading />
      ) : list.data?.items.length === 0 ? (
        <Empty title={collection || status || source ? 'No attempt matches these filters.' : 'No webhook has been sent from this database yet.'}>
          <p class="muted">
            Add a trigger in a collection's <em>Webhook triggers</em> tab, or a <a href="#/cron">cron job</a>.
          </p>
        </Empty>
      ) : (
        list.data && (
          <>
            <div class="table-wrap">
              <table class="table">
                <caption class="sr-only">Webhook delivery attempts</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Status</th>
                    <th scope="col">Source</th>
                    <th scope="col">Request</th>
                    <th scope="col">Attempt</th>
                    <th scope="col">Answer</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.items.map((log) => (
                    <tr key={log.id}>
                      <td class="nowrap" title={formatDate(log.created)}>
                        {fromNow(log.created)}
                      </td>
                      <td>
                        <Badge tone={TONE[log.status]}>{log.status}</Badge>
                      </td>
                      <td>
                        {log.source === 'trigger' ? (
                          <>
                            {log.collection} <span class="muted">· {log.action}</span>
                          </>
                        ) : (
                          <>
                            {log.source} <span class="muted">· {log.name}</span>
                          </>
                        )}
                      </td>
                      <td class="truncate-cell">
                        <span class="mono small">
                          {log.method} {log.url}
                        </span>
                      </td>
                      <td>{log.attempt}</td>
                      <td>
                        {log.statusCode ? <span class="mono">{log.statusCode}</span> : <span class="muted">no answer</span>} <span class="muted small">{log.durationMs} ms</span>
                        {log.error && <div class="small error-text">{log.error}</div>}
                      </td>
                      <td class="row-actions">
                        <Button small onClick={() => void retry(log)} aria-label={`Retry event ${log.eventId} (${log.status}, ${log.collection || log.name})`}>
                          Retry
                        </Button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pagination page={list.data.page} totalPages={list.data.totalPages} totalItems={list.data.totalItems} onPage={setPage} what="attempts" />
          </>
        )
      )}
    </>
  );
}
