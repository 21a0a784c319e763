import { useState } from 'preact/hooks';
import { api, fieldError, type Page } from '../api.ts';
import { navigate } from '../router.ts';
import { formatDate, fromNow } from '../ui/format.ts';
import { useAction, useLoad } from '../ui/hooks.ts';
import { Badge, Button, CopyButton, Empty, ErrorBox, JsonEditor, Loading, PageHeader, Pagination, TextField } from '../ui/kit.tsx';
import { confirm, Modal, notify } from '../ui/overlays.tsx';

interface Workflow {
  id: string;
  name: string;
  steps: Array<Record<string, unknown> & { type: string }>;
  created: string;
  updated: string;
}

interface Run {
  id: string;
  workflow: string;
  event: unknown;
  status: 'queued' | 'running' | 'success' | 'failed';
  steps: Array<{ type: string; status: string; collection?: string; record?: string; eventId?: string; error?: string }>;
  error: string;
  created: string;
  updated: string;
}

const RUN_TONE = { queued: 'neutral', running: 'info', success: 'success', failed: 'danger' } as const;

const EXAMPLE_STEPS = JSON.stringify(
  [
    { type: 'create_record', collection: 'leads', data: { name: '{{event.contact.name}}', source: '{{event.source}}' } },
    { type: 'webhook', url: 'https://example.com/hooks/leads', method: 'POST' },
  ],
  null,
  2,
);

export function WorkflowsPage({ selected }: { selected?: string }) {
  const list = useLoad(() => api<Page<Workflow>>('GET', '/api/workflows', { query: { perPage: 500 } }), []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Workflow & { secret: string }>();
  const current = list.data?.items.find((w) => w.name === selected);
  return (
    <>
      <PageHeader title="Workflows" subtitle="Inbound events that run steps: create a record, send a webhook.">
        <Button variant="primary" onClick={() => setCreating(true)}>
          New workflow
        </Button>
      </PageHeader>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? (
        <Loading />
      ) : list.data?.items.length === 0 ? (
        <Empty title="No workflows in this database.">
          <Button variant="primary" onClick={() => setCreating(true)}>
            Create a workflow
          </Button>
        </Empty>
      ) : (
        <div class="split">
          <nav class="list-nav" aria-label="Workflows">
            <ul>
              {list.data?.items.map((w) => (
                <li key={w.id}>
                  <a href={`#/workflows/${encodeURIComponent(w.name)}`} aria-current={w.name === selected ? 'page' : undefined} class={w.name === selected ? 'active' : ''}>
                    <span class="strong">{w.name}</span>
                    <span class="muted small">{w.steps.length} step(s)</span>
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="grow">{current ? <WorkflowDetail key={current.name} workflow={current} onDeleted={() => { list.reload(); navigate('/workflows'); }} /> : <p class="muted">Choose a workflow to see its steps and runs.</p>}</div>
        </div>
      )}
      {creating && (
        <CreateWorkflow
          onClose={() => setCreating(false)}
          onCreated={(w) => {
            setCreating(false);
            setCreated(w);
            list.reload();
            navigate(`/workflows/${encodeURIComponent(w.name)}`);
          }}
        />
      )}
      {created && (
        <Modal title={`Workflow "${created.name}" created`} onClose={() => setCreated(undefined)} footer={<Button variant="primary" onClick={() => setCreated(undefined)}>I have stored it</Button>}>
          <p class="note warning" role="alert">
            Copy the secret now: Cairn keeps only its hash and <strong>cannot show it again</strong>.
          </p>
          <div class="secret-row">
            <TextField label="Workflow secret" value={created.secret} onValue={() => undefined} readOnly class="grow mono-input" />
            <CopyButton text={created.secret} label="Copy workflow secret" />
          </div>
          <p class="hint">
            Send events with <code>POST /api/workflows/{created.name}/events</code> and <code>Authorization: Bearer &lt;secret&gt;</code>.
          </p>
        </Modal>
      )}
    </>
  );
}

function WorkflowDetail({ workflow, onDeleted }: { workflow: Workflow; onDeleted: () => void }) {
  const [page, setPage] = useState(1);
  const runs = useLoad(() => api<Page<Run>>('GET', `/api/workflows/${encodeURIComponent(workflow.name)}/runs`, { query: { page, perPage: 20 } }), [workflow.name, page]);
  const [event, setEvent] = useState('{\n  "hello": "world"\n}');
  const [open, setOpen] = useState<string>();
  const send = useAction(async () => {
    const r = await api<{ id: string }>('POST', `/api/workflows/${encodeURIComponent(workflow.name)}/events`, { body: JSON.parse(event) });
    notify(`Event accepted: run ${r.id}.`);
    runs.reload();
  });
  const remove = async () => {
    if (!(await confirm(`Delete workflow "${workflow.name}"?`, <p>Its definition and runs are deleted; events sent to it afterwards are refused.</p>, 'Delete workflow'))) return;
    try {
      await api('DELETE', `/api/workflows/${encodeURIComponent(workflow.name)}`);
      notify(`Workflow "${workflow.name}" deleted.`);
      onDeleted();
    } catch (err) {
      send.setError(err);
    }
  };
  return (
    <section class="stack" aria-label={`Workflow ${workflow.name}`}>
      <div class="section-head">
        <h2>{workflow.name}</h2>
        <Button variant="danger" small onClick={() => void remove()}>
          Delete workflow
        </Button>
      </div>
      <details class="card">
        <summary>Steps ({workflow.steps.length})</summary>
        <pre class="code">{JSON.stringify(workflow.steps, null, 2)}</pre>
      </details>
      <form
        class="card stack"
        onSubmit={(e) => {
          e.preventDefault();
          void send.run();
        }}
      >
        <JsonEditor label="Test event (JSON)" text={event} onText={setEvent} rows={4} />
        <ErrorBox error={send.error} />
        <div>
          <Button type="submit" busy={send.busy}>
            Send test event
          </Button>
        </div>
      </form>
      <div class="section-head">
        <h3>Runs</h3>
        <Button small onClick={runs.reload}>
          Refresh runs
        </Button>
      </div>
      <ErrorBox error={runs.error} />
      {runs.loading && !runs.data ? (
        <Loading />
      ) : runs.data?.items.length === 0 ? (
        <Empty title="No runs yet." />
      ) : (
        runs.data && (
          <>
            <ul class="runs">
              {runs.data.items.map((r) => (
                <li key={r.id} class="card">
                  <button type="button" class="run-head" aria-expanded={open === r.id} onClick={() => setOpen(open === r.id ? undefined : r.id)}>
                    <Badge tone={RUN_TONE[r.status]}>{r.status}</Badge>
                    <span class="mono small">{r.id}</span>
                    <span class="muted small" title={formatDate(r.created)}>
                      {fromNow(r.created)}
                    </span>
                  </button>
                  {r.error && <p class="error-text small">{r.error}</p>}
                  {open === r.id && (
                    <div class="stack">
                      <ol class="steps">
                        {r.steps.map((s, i) => (
                          <li key={i}>
                            <Badge tone={s.status === 'success' ? 'success' : s.status === 'failed' ? 'danger' : 'neutral'}>{s.status}</Badge> {s.type}
                            {s.collection && <span class="muted"> → {s.collection}</span>}
                            {s.record && <span class="mono small"> {s.record}</span>}
                            {s.error && <span class="error-text small"> {s.error}</span>}
                          </li>
                        ))}
                      </ol>
                      <pre class="code">{JSON.stringify(r.event, null, 2)}</pre>
                    </div>
                  )}
                </li>
              ))}
            </ul>
            <Pagination page={runs.data.page} totalPages={runs.data.totalPages} totalItems={runs.data.totalItems} onPage={setPage} what="runs" />
          </>
        )
      )}
    </section>
  );
}

function CreateWorkflow({ onClose, onCreated }: { onClose: () => void; onCreated: (w: Workflow & { secret: string }) => void }) {
  const [name, setName] = useState('');
  const [secret, setSecret] = useState('');
  const [steps, setSteps] = useState(EXAMPLE_STEPS);
  const action = useAction(async () => {
    onCreated(await api('POST', '/api/workflows', { body: { name, ...(secret ? { secret } : {}), steps: JSON.parse(steps) } }));
  });
  return (
    <Modal title="New workflow" onClose={onClose} side>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run();
        }}
      >
        <TextField label="Workflow name" value={name} onValue={setName} required error={fieldError(action.error, 'name')} hint="Letters, digits, _ and -." />
        <TextField label="Secret" value={secret} onValue={setSecret} error={fieldError(action.error, 'secret')} hint="16+ characters; empty generates one. Shown once." />
        <JsonEditor
          label="Steps (JSON)"
          text={steps}
          onText={setSteps}
          rows={14}
          error={fieldError(action.error, 'steps')}
          hint={
            <>
              <code>create_record {'{collection, data}'}</code> and <code>webhook {'{url, method, headers?, body?}'}</code>; placeholders <code>{'{{event.path}}'}</code>,{' '}
              <code>{'{{steps.0.record.id}}'}</code>.
            </>
          }
        />
        <ErrorBox error={action.error} />
        <div class="form-actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" type="submit" busy={action.busy}>
            Create workflow
          </Button>
        </div>
      </form>
    </Modal>
  );
}
