import { useState } from 'preact/hooks';
import { api, download, fieldError } from '../api.ts';
import { formatDate } from '../ui/format.ts';
import { useAction, useLoad } from '../ui/hooks.ts';
import { Badge, Button, Empty, ErrorBox, Loading, PageHeader, TextField } from '../ui/kit.tsx';
import { confirm, Modal, notify } from '../ui/overlays.tsx';

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
  const list = useLoad(() => api<{ items: Migration[] }>('GET', '/api/migrations', instance), []);
  const status = useLoad(() => api<Status>('GET', '/api/migrations/status', instance), []);
  const [generating, setGenerating] = useState(false);
  const [preview, setPreview] = useState<Loaded & { generated?: boolean }>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState<string>();
  const reload = () => {
    list.reload();
    status.reload();
  };
  const run = async (label: string, what: () => Promise<unknown>) => {
    setError(undefined);
    setBusy(label);
    try {
      await what();
      reload();
    } catch (err) {
      setError(err);
      reload();
    } finally {
      setBusy(undefined);
    }
  };
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

  const items = list.data?.items ?? [];
  const latestApplied = [...items].reverse().find((m) => m.status === 'applied');

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

      <div class="stats" aria-label="Migration status">
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

      <ErrorBox error={error ?? list.error ?? status.error} />
      {list.loading && !list.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <Empty title="No migrations yet.">
          <p class="muted">Change the schema (collections, fields, rules), then generate a migration from the difference.</p>
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="table">
            <caption class="sr-only">Migrations</caption>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Applied</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {[...items].reverse().map((m) => (
                <tr key={m.version}>
                  <td class="mono small">{m.version}</td>
                  <th scope="row">
                    {m.name}
                    {m.description && <div class="muted small">{m.description}</div>}
                    {m.error && <div class="error-text small">{m.error}</div>}
                  </th>
                  <td>
                    <Badge tone={TONE[m.status]}>{m.status}</Badge> {m.modified && <Badge tone="danger">file modified</Badge>}
                  </td>
                  <td class="nowrap">{m.applied_at ? formatDate(m.applied_at) : '—'}</td>
                  <td class="row-actions">
                    <Button small onClick={() => void view(m)} aria-label={`View migration ${m.name}`}>
                      View
                    </Button>
                    <Button small onClick={() => void run('download', () => download(`/api/migrations/${m.version}/download`, `${m.version}.yaml`, instance))} aria-label={`Download migration ${m.name}`}>
                      Download
                    </Button>
                    {m.status !== 'applied' && (
                      <Button small variant="primary" onClick={() => void apply(m)} busy={busy === `apply ${m.version}`} aria-label={`Apply migration ${m.name}`}>
                        Apply
                      </Button>
                    )}
                    {m === latestApplied && (
                      <Button small variant="danger" onClick={() => void rollback(m)} busy={busy === `rollback ${m.version}`} aria-label={`Roll back migration ${m.name}`}>
                        Roll back
                      </Button>
                    )}
                    {m.status !== 'applied' && (
                      <Button small variant="ghost" onClick={() => void remove(m)} aria-label={`Delete migration ${m.name}`}>
                        Delete
                      </Button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

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
          <ErrorBox error={error} />
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

function FilePick({ label, accept, onFile, busy }: { label: string; accept: string; onFile: (f: File) => void; busy?: boolean }) {
  const id = `pick-${label.replace(/\W+/g, '-')}`;
  return (
    <div class="file-pick">
      <input
        id={id}
        type="file"
        accept={accept}
        class="sr-only"
        onChange={(e) => {
          const file = e.currentTarget.files?.[0];
          e.currentTarget.value = '';
          if (file) onFile(file);
        }}
      />
      <label for={id} class={`btn btn-secondary ${busy ? 'is-busy' : ''}`}>
        {label}
      </label>
    </div>
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
    <Modal title="Generate a migration" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run();
        }}
      >
        <p class="muted">Cairn compares the schema recorded by the last applied migration with the live schema of every database and saves the difference as a pending migration, which you can review before applying it.</p>
        <TextField label="Migration name" value={name} onValue={setName} required placeholder="add posts" error={fieldError(action.error, 'name')} autoFocus />
        <TextField label="Description" value={description} onValue={setDescription} error={fieldError(action.error, 'description')} />
        <ErrorBox error={action.error} />
        <div class="form-actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" type="submit" busy={action.busy}>
            Generate
          </Button>
        </div>
      </form>
    </Modal>
  );
}
