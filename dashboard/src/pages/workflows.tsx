import { useState } from 'preact/hooks';
import { api, fieldError, type Page } from '../api.ts';
import { navigate } from '../router.ts';
import { formatDate, fromNow } from '../ui/format.ts';
import { useAction, useLoad } from '../ui/hooks.ts';
import { Badge, Button, CopyButton, ErrorBox, Form, JsonEditor, Loading, PageHeader, TextField } from '../ui/kit.tsx';
import { DataList } from '../ui/list.tsx';
import { confirm, FormDialog, Modal, notify } from '../ui/overlays.tsx';

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
  const create = (
    <Button variant="primary" onClick={() => setCreating(true)}>
      New workflow
    </Button>
  );
  return (
    <>
      {selected === undefined ? (
        <>
          <PageHeader title="Workflows" subtitle="Inbound events that run steps: create a record, send a webhook.">
            {create}
          </PageHeader>
          <DataList
            caption="Workflows"
            load={list}
            rowKey={(w) => w.id}
            rowName={(w) => `workflow ${w.name}`}
            empty="No workflows in this database."
            emptyAction={create}
            columns={[
              { id: 'name', label: 'Name', rowHeader: true, sort: (w) => w.name, cell: (w) => <a href={`#/workflows/${encodeURIComponent(w.name)}`} class="strong">{w.name}</a> },
              { id: 'steps', label: 'Steps', cell: (w) => w.steps.map((step) => step.type).join(' → ') },
              { id: 'updated', label: 'Updated', class: 'nowrap', sort: (w) => w.updated, cell: (w) => formatDate(w.updated) },
            ]}
            actions={(w) => [{ label: 'Runs', href: `#/workflows/${encodeURIComponent(w.name)}` }]}
          />
        </>
      ) : current ? (
        <WorkflowDetail key={current.name} workflow={current} onDeleted={() => { list.reload(); navigate('/workflows'); }} />
      ) : (
        <>
          <PageHeader title={selected} subtitle={<a href="#/workflows">All workflows</a>} />
          {list.loading ? <Loading /> : <ErrorBox error={list.error ?? new Error(`There is no workflow "${selected}" in this database.`)} />}
        </>
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
    <>
      <PageHeader title={workflow.name} subtitle={<a href="#/workflows">All workflows</a>}>
        <Button variant="danger" onClick={() => void remove()}>
          Delete workflow
        </Button>
      </PageHeader>
      <div class="stack">
        <details class="card">
          <summary>Steps ({workflow.steps.length})</summary>
          <pre class="code">{JSON.stringify(workflow.steps, null, 2)}</pre>
        </details>
        <Form class="card stack" onSubmit={() => void send.run()}>
          <JsonEditor label="Test event (JSON)" text={event} onText={setEvent} rows={4} />
          <ErrorBox error={send.error} />
          <div>
            <Button type="submit" busy={send.busy}>
              Send test event
            </Button>
          </div>
        </Form>
        <div class="section-head">
          <h2>Runs</h2>
          <Button small onClick={runs.reload}>
            Refresh runs
          </Button>
        </div>
        <div>
          <DataList
            caption={`Runs of ${workflow.name}`}
            load={runs}
            rowKey={(r) => r.id}
            rowName={(r) => `run ${r.id}`}
            empty="No runs yet."
            emptyAction={<p class="muted">Send a test event above, or post one to the workflow's events URL.</p>}
            onPage={setPage}
            what="runs"
            columns={[
              { id: 'id', label: 'Run', rowHeader: true, class: 'mono small', cell: (r) => r.id },
              { id: 'status', label: 'Status', cell: (r) => <Badge tone={RUN_TONE[r.status]}>{r.status}</Badge> },
              { id: 'created', label: 'When', class: 'nowrap', cell: (r) => <span title={formatDate(r.created)}>{fromNow(r.created)}</span> },
              {
                id: 'steps',
                label: 'Steps',
                cell: (r) => (
                  <>
                    {r.steps.filter((x) => x.status === 'success').length}/{r.steps.length} succeeded
                    {r.error && <div class="error-text small">{r.error}</div>}
                  </>
                ),
              },
            ]}
            actions={(r) => [
              { label: open === r.id ? 'Hide' : 'Details', name: `${open === r.id ? 'Hide' : 'Show'} details of run ${r.id}`, variant: 'ghost', expanded: open === r.id, onClick: () => setOpen(open === r.id ? undefined : r.id) },
            ]}
            details={(r) =>
              open === r.id ? (
                <div class="stack">
                  <ol class="steps">
                    {r.steps.map((step, i) => (
                      <li key={i}>
                        <Badge tone={step.status === 'success' ? 'success' : step.status === 'failed' ? 'danger' : 'neutral'}>{step.status}</Badge> {step.type}
                        {step.collection && <span class="muted"> → {step.collection}</span>}
                        {step.record && <span class="mono small"> {step.record}</span>}
                        {step.error && <span class="error-text small"> {step.error}</span>}
                      </li>
                    ))}
                  </ol>
                  <pre class="code">{JSON.stringify(r.event, null, 2)}</pre>
                </div>
              ) : undefined
            }
          />
        </div>
      </div>
    </>
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
    <FormDialog title="New workflow" onClose={onClose} side action={action} submit="Create workflow">
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
    </FormDialog>
  );
}
