import { Cron } from 'croner';
import { useMemo, useState } from 'preact/hooks';
import { api, fieldError, type Page } from '../api.ts';
import { formatDate, fromNow } from '../ui/format.ts';
import { useAction, useLoad, useTasks } from '../ui/hooks.ts';
import { Badge, Button, CheckField, JsonEditor, PageHeader, SelectField, TextArea, TextField } from '../ui/kit.tsx';
import { DataList } from '../ui/list.tsx';
import { confirm, FormDialog, notify } from '../ui/overlays.tsx';

interface CronJob {
  id: string;
  name: string;
  schedule: string;
  timezone: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
  secret?: string;
  enabled: boolean;
  lastRunAt: string | null;
  nextRunAt: string | null;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * The next runs of a schedule, as a preview while typing; the server checks the schedule when the
 * job is saved (same cron library; `@every` as docs/webhooks.md defines it).
 */
export function previewSchedule(schedule: string, timezone: string): { runs?: Date[]; problem?: string } {
  const text = schedule.trim();
  if (text === '') return {};
  const every = /^@every\s+(.+)$/.exec(text);
  if (every) {
    const parts = [...every[1].matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
    if (parts.length === 0 || parts.map((p) => p[0]).join('') !== every[1].replace(/\s+/g, '')) return { problem: 'Use a duration such as 30s, 5m or 1h30m.' };
    const ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]], 0);
    if (ms < 1000 || ms > 366 * UNITS.d) return { problem: 'The interval must be between 1 s and 366 days.' };
    const now = Date.now();
    return { runs: [1, 2, 3].map((n) => new Date(now + n * ms)) };
  }
  try {
    const job = new Cron(text, { timezone: timezone || 'UTC', paused: true });
    return { runs: job.nextRuns(3) };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

export function CronPage() {
  const list = useLoad(() => api<Page<CronJob>>('GET', '/api/webhooks/cron', { query: { perPage: 500 } }), []);
  const [editing, setEditing] = useState<CronJob | 'new'>();
  const tasks = useTasks(list.reload);
  const remove = (job: CronJob) =>
    tasks.run('delete', async () => {
      if (!(await confirm(`Delete cron job "${job.name}"?`, <p>Its future runs are cancelled. Past attempts stay in the webhook logs.</p>, 'Delete job'))) return;
      await api('DELETE', `/api/webhooks/cron/${job.id}`);
      notify(`Cron job "${job.name}" deleted.`);
    });
  return (
    <>
      <PageHeader title="Cron jobs" subtitle="Requests sent on a schedule, through the same outbox, retries and logs as triggers.">
        <Button variant="primary" onClick={() => setEditing('new')}>
          New cron job
        </Button>
      </PageHeader>
      <DataList
        caption="Cron jobs"
        load={list}
        error={tasks.error}
        rowKey={(job) => job.id}
        rowName={(job) => `cron job ${job.name}`}
        empty="No cron jobs in this database."
        emptyAction={
          <Button variant="primary" onClick={() => setEditing('new')}>
            Schedule a request
          </Button>
        }
        columns={[
          { id: 'name', label: 'Name', rowHeader: true, sort: (job) => job.name, cell: (job) => <>{job.name} {!job.enabled && <Badge tone="warning">disabled</Badge>}</> },
          { id: 'schedule', label: 'Schedule', cell: (job) => <><code>{job.schedule}</code> <span class="muted small">{job.timezone}</span></> },
          { id: 'request', label: 'Request', class: 'truncate-cell', cell: (job) => <span class="mono small">{job.method} {job.url}</span> },
          { id: 'next', label: 'Next run', class: 'nowrap', sort: (job) => job.nextRunAt ?? '~', cell: (job) => <span title={formatDate(job.nextRunAt)}>{job.nextRunAt ? fromNow(job.nextRunAt) : '—'}</span> },
          { id: 'last', label: 'Last run', class: 'nowrap', sort: (job) => job.lastRunAt ?? '', cell: (job) => <span title={formatDate(job.lastRunAt)}>{job.lastRunAt ? fromNow(job.lastRunAt) : 'never'}</span> },
        ]}
        actions={(job) => [
          { label: 'Edit', onClick: () => setEditing(job) },
          { label: 'Delete', variant: 'danger', onClick: () => void remove(job) },
        ]}
      />
      {editing && (
        <CronForm
          job={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            list.reload();
          }}
        />
      )}
    </>
  );
}

const ZONES = (() => {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return ['UTC'];
  }
})();

function CronForm({ job, onClose, onSaved }: { job?: CronJob; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(job?.name ?? '');
  const [schedule, setSchedule] = useState(job?.schedule ?? '*/5 * * * *');
  const [timezone, setTimezone] = useState(job?.timezone ?? 'UTC');
  const [url, setUrl] = useState(job?.url ?? '');
  const [method, setMethod] = useState(job?.method ?? 'POST');
  const [headers, setHeaders] = useState(job && Object.keys(job.headers ?? {}).length ? JSON.stringify(job.headers, null, 2) : '');
  const [body, setBody] = useState(job?.body !== undefined && job?.body !== null ? JSON.stringify(job.body, null, 2) : '');
  const [secret, setSecret] = useState('');
  const [enabled, setEnabled] = useState(job?.enabled ?? true);
  const preview = useMemo(() => previewSchedule(schedule, timezone), [schedule, timezone]);
  const action = useAction(async () => {
    const payload: Record<string, unknown> = { name, schedule: schedule.trim(), timezone, url, method, enabled, headers: headers.trim() ? JSON.parse(headers) : {}, body: body.trim() ? JSON.parse(body) : null };
    if (secret.trim()) payload.secret = secret.trim();
    const saved = await api<CronJob>(job ? 'PATCH' : 'POST', job ? `/api/webhooks/cron/${job.id}` : '/api/webhooks/cron', { body: payload });
    notify(`Cron job "${saved.name}" saved; next run ${saved.nextRunAt ? fromNow(saved.nextRunAt) : 'none (disabled)'}.`);
    onSaved();
  });
  const zones = ZONES.includes(timezone) ? ZONES : [timezone, ...ZONES];
  return (
    <FormDialog title={job ? `Edit ${job.name}` : 'New cron job'} onClose={onClose} side action={action} submit={job ? 'Save job' : 'Create job'}>
      <TextField label="Job name" value={name} onValue={setName} required error={fieldError(action.error, 'name')} />
      <div class="grid-2">
        <TextField
          label="Schedule"
          class="mono-input"
          value={schedule}
          onValue={setSchedule}
          required
          error={fieldError(action.error, 'schedule') ?? preview.problem}
          hint="Cron (5 or 6 fields), @hourly, @daily…, or @every 30s"
        />
        <SelectField label="Time zone" value={timezone} onValue={setTimezone} options={zones} error={fieldError(action.error, 'timezone')} />
      </div>
      {preview.runs && (
        <div class="note" aria-live="polite">
          <strong>Next runs</strong> <span class="muted small">(your time)</span>:{' '}
          {preview.runs.map((d) => (
            <span key={d.toISOString()} class="chip">
              {formatDate(d.toISOString())}
            </span>
          ))}
        </div>
      )}
      <div class="grid-2">
        <SelectField label="Method" value={method} onValue={setMethod} options={['GET', 'POST', 'PUT', 'PATCH', 'DELETE']} error={fieldError(action.error, 'method')} />
        <CheckField label="Enabled" checked={enabled} onValue={setEnabled} />
      </div>
      <TextField label="URL" type="url" value={url} onValue={setUrl} required error={fieldError(action.error, 'url')} placeholder="https://example.com/jobs/report" />
      <TextArea label="Headers (JSON)" mono rows={2} value={headers} onValue={setHeaders} error={fieldError(action.error, 'headers')} placeholder='{"X-Job": "report"}' />
      <JsonEditor label="Body (JSON)" text={body} onText={setBody} error={fieldError(action.error, 'body')} rows={4} hint="Empty sends Cairn's own {id, event: cron.run, …} body." />
      <TextField
        label="Signing secret"
        value={secret}
        onValue={setSecret}
        placeholder={job ? 'unchanged' : 'whsec_… (optional)'}
        error={fieldError(action.error, 'secret')}
        hint="Standard Webhooks secret; requests are signed when set."
      />
    </FormDialog>
  );
}
