import { useState } from 'preact/hooks';
import { api, download, fieldError } from '../api.ts';
import { formatDate } from '../ui/format.ts';
import { useAction, useLoad, useTasks } from '../ui/hooks.ts';
import { Badge, Button, ErrorBox, FilePick, PageHeader, TextField } from '../ui/kit.tsx';
import { DataList } from '../ui/list.tsx';
import { confirm, FormDialog, Modal, notify } from '../ui/overlays.tsx';

interface Migration {
  version: string;
  name: string;
  description: string;
  created_at: string | null;
  status: 'pending' | 'applied' | 'failed';
  applied_at: string | null;
  databases: string[];
  modified: boolean;
  error: string | null;
}

interface Status {
  appliedCount: number;
  pendingCount: number;
  failedCount: number;
  lastAppliedVersion: string | null;
}

interface Loaded {
  version: string;
  name: string;
  yaml: string;
}

const TONE = { pending: 'warning', applied: 'success', failed: 'danger' } as const;
const instance = { db: false } as const;

export function MigrationsPage() {
  // Newest first.
  const list = useLoad(() => api<{ items: Migration[] }>('GET', '/api/migrations', instance).then((r) => r.items.reverse()), []);
  const status = useLoad(() => api<Status>('GET', '/api/migrations/status', instance), []);
  const [generating, setGenerating] = useState(false);
  const [preview, setPreview] = useState<Loaded & { generated?: boolean }>();
  const reload = () => {
    list.reload();
    status.reload();
  };
  const tasks = useTasks(reload);
  const run = tasks.run;
  const busy = tasks.busy;
  const apply = (m: { version: string; name: string }) =>
    run(`apply ${m.version}`, async () => {
      await api('POST', `/api/migrations/${m.version}/apply`, instance);
      notify(`Migration "${m.name}" applied.`);
      setPreview(undefined);
    });
  const rollback = (m: Migration) =>
    run(`rollback ${m.version}`, async () => {
      if (!(await confirm(`Roll back "${m.name}"?`, <p>Every database goes back to the schema it had before this migration; collections and fields it created are removed from the schema (soft: tables and columns keep their data). The migration becomes pending again.</p>, 'Roll back'))) return;
      await api('POST', `/api/migrations/${m.version}/rollback`, instance);
      notify(`Migration "${m.name}" rolled back.`);
    });
  const remove = (m: { version: string; name: string }) =>
    run(`delete ${m.version}`, async () => {
      if (!(await confirm(`Delete migration "${m.name}"?`, <p>The pending file <code>{m.version}</code> is deleted. Nothing in the databases changes.</p>, 'Delete migration'))) return;
      await api('DELETE', `/api/migrations/${m.version}`, instance);
      notify(`Migration "${m.name}" deleted.`);
      setPreview(undefined);
    });
  const view = (m: Migration) => run(`view ${m.version}`, async () => setPreview(await api<Loaded>('GET', '/api/migrations/load', { ...instance, query: { version: m.version } })));
  const applyPending = () =>
    run('apply-pending', async () => {
      const r = await api<{ applied?: string[] }>('POST', '/api/migrations/apply-pending', instance);
      notify(r?.applied ? `${r.applied.length} migration(s) applied.` : 'Pending migrations applied.');
    });
  const upload = (file: File, kind: 'upload' | 'import') =>
    run(kind, async () => {
      const form = new FormData();
      form.append('file', file);
      const r = await api<{ imported?: string[]; skipped?: string[]; name?: string }>('POST', `/api/migrations/${kind}`, { ...instance, form });
      notify(kind === 'import' ? `Imported ${r.imported?.length ?? 0}, skipped ${r.skipped?.length ?? 0} identical.` : `Migration "${r.name}" uploaded as pending.`);
    });

  const items = list.data ?? [];
  const latestApplied = items.find((m) => m.status === 'applied');

  return (
    <>
      <PageHeader title="Migrations" subtitle="The schema of every database as versioned YAML files: generate on development, export, import and apply on production.">
        <Button onClick={() => void run('export', () => download('/api/migrations/export', 'migrations.zip', instance))} busy={busy === 'export'}>
          Export all (ZIP)
        </Button>
        <Button variant="primary" onClick={() => setGenerating(true)}>
          Generate migration
        </Button>
      </PageHeader>

      <div class="stats" aria-label="Migration status" role="group">
        <Stat label="Applied" value={status.data?.appliedCount} />
        <Stat label="Pending" value={status.data?.pendingCount} tone={status.data?.pendingCount ? 'warning' : undefined} />
        <Stat label="Failed" value={status.data?.failedCount} tone={status.data?.failedCount ? 'danger' : undefined} />
        <Stat label="Last applied" value={status.data?.lastAppliedVersion ?? '—'} mono />
      </div>

      <div class="toolbar">
        <FilePick label="Upload migration (YAML)" accept=".yaml,.yml,application/yaml" onFile={(f) => void upload(f, 'upload')} busy={busy === 'upload'} />
        <FilePick label="Import archive (ZIP)" accept=".zip,application/zip" onFile={(f) => void upload(f, 'import')} busy={busy === 'import'} />
        <Button onClick={() => void applyPending()} disabled={!status.data?.pendingCount} busy={busy === 'apply-pending'}>
          Apply all pending
        </Button>
      </div>

      <DataList
        caption="Migrations"
        load={list}
        error={tasks.error ?? status.error}
        rowKey={(m) => m.version}
        rowName={(m) => `migration ${m.name}`}
        empty="No migrations yet."
        emptyAction={<p class="muted">Change the schema (collections, fields, rules), then generate a migration from the difference.</p>}
        columns={[
          {
            id: 'name',
            label: 'Name',
            rowHeader: true,
            sort: (m) => m.name,
            cell: (m) => (
              <>
                {m.name}
                {m.description && <div class="muted small">{m.description}</div>}
                {m.error && <div class="error-text small">{m.error}</div>}
              </>
            ),
          },
          { id: 'version', label: 'Version', class: 'mono small', sort: (m) => m.version, cell: (m) => m.version },
          { id: 'status', label: 'Status', sort: (m) => m.status, cell: (m) => <><Badge tone={TONE[m.status]}>{m.status}</Badge> {m.modified && <Badge tone="danger">file modified</Badge>}</> },
          { id: 'applied', label: 'Applied', class: 'nowrap', cell: (m) => (m.applied_at ? formatDate(m.applied_at) : '—') },
        ]}
        actions={(m) => [
          { label: 'View', onClick: () => void view(m) },
          { label: 'Download', onClick: () => void run('download', () => download(`/api/migrations/${m.version}/download`, `${m.version}.yaml`, instance)) },
          m.status !== 'applied' && { label: 'Apply', variant: 'primary', onClick: () => void apply(m), busy: busy === `apply ${m.version}` },
          m === latestApplied && { label: 'Roll back', variant: 'danger', onClick: () => void rollback(m), busy: busy === `rollback ${m.version}` },
          m.status !== 'applied' && { label: 'Delete', variant: 'ghost', onClick: () => void remove(m) },
        ]}
      />

      {generating && (
        <Generate
          onClose={() => setGenerating(false)}
          onGenerated={(m) => {
            setGenerating(false);
            reload();
            if (m) setPreview({ ...m, generated: true });
            else notify('No changes since the last applied migration: nothing to generate.');
          }}
        />
      )}
      {preview && (
        <Modal
          title={`${preview.generated ? 'Generated: ' : ''}${preview.name}`}
          onClose={() => setPreview(undefined)}
          wide
          footer={
            items.find((m) => m.version === preview.version)?.status !== 'applied' ? (
              <>
                <Button variant="ghost" onClick={() => void remove(preview)}>
                  Discard migration
                </Button>
                <Button onClick={() => setPreview(undefined)}>Keep as pending</Button>
                <Button variant="primary" onClick={() => void apply(preview)} busy={busy === `apply ${preview.version}`}>
                  Apply migration
                </Button>
              </>
            ) : (
              <Button onClick={() => setPreview(undefined)}>Close</Button>
            )
          }
        >
          <p class="muted">
            Version <code>{preview.version}</code>. {preview.generated ? 'The difference between the last applied schema and the live one, saved as pending:' : ''}
          </p>
          <ErrorBox error={tasks.error} />
          <YamlView text={preview.yaml} />
        </Modal>
      )}
    </>
  );
}

function Stat({ label, value, tone, mono }: { label: string; value: unknown; tone?: 'warning' | 'danger'; mono?: boolean }) {
  return (
    <div class={`stat ${tone ? `stat-${tone}` : ''}`}>
      <span class="stat-label">{label}</span>
      <span class={`stat-value ${mono ? 'mono small' : ''}`}>{value === undefined ? '…' : String(value)}</span>
    </div>
  );
}

/** The migration as a diff reads: what it creates in green, what it drops or removes in red. */
function YamlView({ text }: { text: string }) {
  return (
    <pre class="code yaml" aria-label="Migration YAML" tabIndex={0}>
      {text.split('\n').map((line, i) => {
        const cls = /\b(drop_|remove_|delete)/.test(line) ? 'del' : /\b(create_|add_)/.test(line) ? 'add' : /\b(update_|alter_|rename)/.test(line) ? 'chg' : '';
        return (
          <span key={i} class={`line ${cls}`}>
            {line}
            {'\n'}
          </span>
        );
      })}
    </pre>
  );
}

function Generate({ onClose, onGenerated }: { onClose: () => void; onGenerated: (m: Loaded | undefined) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const action = useAction(async () => {
    const r = await api<Loaded & { changes?: boolean }>('GET', '/api/migrations/generate', { ...instance, query: { name, description } });
    onGenerated(r.changes === false ? undefined : r);
  });
  return (
    <FormDialog title="Generate a migration" onClose={onClose} action={action} submit="Generate">
      <p class="muted">Cairn compares the schema recorded by the last applied migration with the live schema of every database and saves the difference as a pending migration, which you can review before applying it.</p>
      <TextField label="Migration name" value={name} onValue={setName} required placeholder="add posts" error={fieldError(action.error, 'name')} autoFocus />
      <TextField label="Description" value={description} onValue={setDescription} error={fieldError(action.error, 'description')} />
    </FormDialog>
  );
}
