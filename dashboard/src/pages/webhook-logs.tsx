import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api.ts';
import { SUPERUSERS } from '../model.ts';
import { formatDate, fromNow } from '../ui/format.ts';
import { useLoad, useTasks } from '../ui/hooks.ts';
import { Badge, Button, CheckField, PageHeader, SelectField } from '../ui/kit.tsx';
import { DataList } from '../ui/list.tsx';
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
const STATUSES = [
  { value: 'success', label: 'Success' },
  { value: 'retrying', label: 'Retrying' },
  { value: 'failed', label: 'Failed' },
];
const SOURCES = [
  { value: 'trigger', label: 'Triggers' },
  { value: 'cron', label: 'Cron jobs' },
  { value: 'workflow', label: 'Workflows' },
];

export function WebhookLogsPage() {
  const collections = useCollections();
  const [collection, setCollection] = useState('');
  const [status, setStatus] = useState('');
  const [source, setSource] = useState('');
  const [page, setPage] = useState(1);
  const [live, setLive] = useState(true);
  const list = useLoad(() => api<Page<WebhookLog>>('GET', '/api/webhooks/logs', { query: { collection, status, source, page, perPage: 50 } }), [collection, status, source, page]);

  // Deliveries happen in the background: while "live" is on, the first page follows them.
  useEffect(() => {
    if (!live || page !== 1) return;
    const t = setInterval(list.reload, 3000);
    return () => clearInterval(t);
  }, [live, page, list.reload]);

  const tasks = useTasks(list.reload);
  const retry = (log: WebhookLog) =>
    tasks.run('retry', async () => {
      await api('POST', `/api/webhooks/logs/${log.id}/retry`);
      notify('Event queued again; its attempts will show here.');
    });
  // Every filter starts again from the first page.
  const filterBy = (set: (v: string) => void) => (v: string) => {
    set(v);
    setPage(1);
  };

  return (
    <>
      <PageHeader title="Webhook logs" subtitle="Every delivery attempt of triggers, cron jobs and workflow steps, newest first.">
        <CheckField label="Follow new attempts" checked={live} onValue={setLive} switch />
        <Button onClick={list.reload}>Refresh</Button>
      </PageHeader>
      <div class="toolbar">
        <SelectField label="Collection" value={collection} onValue={filterBy(setCollection)} options={[{ value: '', label: 'All collections' }, ...(collections.data ?? []).filter((c) => c.name !== SUPERUSERS).map((c) => ({ value: c.name, label: c.name }))]} />
        <SelectField label="Status" value={status} onValue={filterBy(setStatus)} options={[{ value: '', label: 'Any status' }, ...STATUSES]} />
        <SelectField label="Source" value={source} onValue={filterBy(setSource)} options={[{ value: '', label: 'Any source' }, ...SOURCES]} />
      </div>
      <DataList
        caption="Webhook delivery attempts"
        load={list}
        error={tasks.error}
        rowKey={(log) => log.id}
        empty={collection || status || source ? 'No attempt matches these filters.' : 'No webhook has been sent from this database yet.'}
        emptyAction={
          <p class="muted">
            Add a trigger in a collection's <em>Webhook triggers</em> tab, or a <a href="#/cron">cron job</a>.
          </p>
        }
        onPage={setPage}
        what="attempts"
        columns={[
          { id: 'created', label: 'When', class: 'nowrap', cell: (log) => <span title={formatDate(log.created)}>{fromNow(log.created)}</span> },
          { id: 'status', label: 'Status', cell: (log) => <Badge tone={TONE[log.status]}>{log.status}</Badge> },
          {
            id: 'source',
            label: 'Source',
            cell: (log) => (log.source === 'trigger' ? <>{log.collection} <span class="muted">· {log.action}</span></> : <>{log.source} <span class="muted">· {log.name}</span></>),
          },
          { id: 'request', label: 'Request', class: 'truncate-cell', cell: (log) => <span class="mono small">{log.method} {log.url}</span> },
          { id: 'attempt', label: 'Attempt', cell: (log) => log.attempt },
          {
            id: 'answer',
            label: 'Answer',
            cell: (log) => (
              <>
                {log.statusCode ? <span class="mono">{log.statusCode}</span> : <span class="muted">no answer</span>} <span class="muted small">{log.durationMs} ms</span>
                {log.error && <div class="small error-text">{log.error}</div>}
              </>
            ),
          },
        ]}
        actions={(log) => [{ label: 'Retry', name: `Retry event ${log.eventId} (${log.status}, ${log.collection || log.name})`, onClick: () => void retry(log) }]}
      />
    </>
  );
}
