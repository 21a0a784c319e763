import { useState } from 'preact/hooks';
import { api, database, fieldError, type Page } from '../api.ts';
import { formatDate } from '../ui/format.ts';
import { useAction, useLoad, useStore } from '../ui/hooks.ts';
import { Badge, Button, CheckField, CopyButton, Empty, ErrorBox, Loading, PageHeader, Pagination, TextField } from '../ui/kit.tsx';
import { confirm, Modal, notify } from '../ui/overlays.tsx';

interface ApiKey {
  id: string;
  name: string;
  enabled: boolean;
  roles: string[];
  created: string;
  updated: string;
}

type Issued = ApiKey & { key: string; token: string };

export function KeysPage() {
  const db = useStore(database);
  const [page, setPage] = useState(1);
  const list = useLoad(() => api<Page<ApiKey>>('GET', '/api/keys', { query: { page, perPage: 50 } }), [page]);
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<Issued>();
  const [rowError, setRowError] = useState<unknown>();

  const act = async (what: () => Promise<unknown>) => {
    setRowError(undefined);
    try {
      await what();
      list.reload();
    } catch (err) {
      setRowError(err);
    }
  };
  const rotate = (k: ApiKey) =>
    act(async () => {
      if (!(await confirm(`Rotate "${k.name}"?`, <p>A new key and token are issued. The current key and its token stop working at once: update the services that use them.</p>, 'Rotate key'))) return;
      setIssued(await api<Issued>('POST', `/api/keys/${k.id}/rotate`));
    });
  const toggle = (k: ApiKey) =>
    act(async () => {
      await api('PATCH', `/api/keys/${k.id}`, { body: { enabled: !k.enabled } });
      notify(k.enabled ? `Key "${k.name}" disabled.` : `Key "${k.name}" enabled.`);
    });
  const remove = (k: ApiKey) =>
    act(async () => {
      if (!(await confirm(`Delete "${k.name}"?`, <p>The key and its token stop working for good.</p>, 'Delete key'))) return;
      await api('DELETE', `/api/keys/${k.id}`);
      notify(`Key "${k.name}" deleted.`);
    });

  return (
    <>
      <PageHeader title="API keys" subtitle={<>For services calling the <code>{db}</code> database. A key is shown once, when it is created or rotated.</>}>
        <Button variant="primary" onClick={() => setCreating(true)}>
          New API key
        </Button>
      </PageHeader>
      <ErrorBox error={list.error ?? rowError} />
      {list.loading && !list.data ? (
        <Loading />
      ) : list.data?.items.length === 0 ? (
        <Empty title="No API keys in this database.">
          <Button variant="primary" onClick={() => setCreating(true)}>
            Create an API key
          </Button>
        </Empty>
      ) : (
        list.data && (
          <>
            <div class="table-wrap">
              <table class="table">
                <caption class="sr-only">API keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Roles</th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.items.map((k) => (
                    <tr key={k.id}>
                      <th scope="row">{k.name}</th>
                      <td>{k.roles.length ? k.roles.map((r) => <Badge key={r} tone={r === 'admin' ? 'warning' : 'neutral'}>{r}</Badge>) : <span class="muted">none</span>}</td>
                      <td>{k.enabled ? <Badge tone="success">enabled</Badge> : <Badge tone="danger">disabled</Badge>}</td>
                      <td class="nowrap">{formatDate(k.created)}</td>
                      <td class="row-actions">
                        <Button small onClick={() => void toggle(k)} aria-label={`${k.enabled ? 'Disable' : 'Enable'} key ${k.name}`}>
                          {k.enabled ? 'Disable' : 'Enable'}
                        </Button>
                        <Button small onClick={() => void rotate(k)} aria-label={`Rotate key ${k.name}`}>
                          Rotate
                        </Button>
                        <Button small variant="danger" onClick={() => void remove(k)} aria-label={`Delete key ${k.name}`}>
                          Delete
                        </Button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pagination page={list.data.page} totalPages={list.data.totalPages} totalItems={list.data.totalItems} onPage={setPage} what="keys" />
          </>
        )
      )}
      {creating && (
        <CreateKey
          onClose={() => setCreating(false)}
          onCreated={(k) => {
            setCreating(false);
            setIssued(k);
            list.reload();
          }}
        />
      )}
      {issued && <IssuedKey issued={issued} onClose={() => setIssued(undefined)} />}
    </>
  );
}

function CreateKey({ onClose, onCreated }: { onClose: () => void; onCreated: (k: Issued) => void }) {
  const [name, setName] = useState('');
  const [roles, setRoles] = useState('');
  const [enabled, setEnabled] = useState(true);
  const action = useAction(async () => onCreated(await api<Issued>('POST', '/api/keys', { body: { name, roles, enabled } })));
  return (
    <Modal title="New API key" onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run();
        }}
      >
        <TextField label="Key name" value={name} onValue={setName} required error={fieldError(action.error, 'name')} autoFocus />
        <TextField
          label="Roles"
          value={roles}
          onValue={setRoles}
          placeholder="service, reports"
          hint={
            <>
              Comma-separated; rules read them as <code>@request.auth.roles</code>. The <code>admin</code> role gives administrator rights.
            </>
          }
          error={fieldError(action.error, 'roles')}
        />
        <CheckField label="Enabled" checked={enabled} onValue={setEnabled} />
        <ErrorBox error={action.error} />
        <div class="form-actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" type="submit" busy={action.busy}>
            Create key
          </Button>
        </div>
      </form>
    </Modal>
  );
}

function IssuedKey({ issued, onClose }: { issued: Issued; onClose: () => void }) {
  return (
    <Modal title={`Key "${issued.name}"`} onClose={onClose} footer={<Button variant="primary" onClick={onClose}>I have stored it</Button>}>
      <p class="note warning" role="alert">
        Copy the key now: Cairn keeps only its hash and <strong>cannot show it again</strong>.
      </p>
      <div class="secret-row">
        <TextField label="API key" value={issued.key} onValue={() => undefined} readOnly class="grow mono-input" onFocus={(e) => e.currentTarget.select()} />
        <CopyButton text={issued.key} label="Copy API key" />
      </div>
      <div class="secret-row">
        <TextField label="Token (JWT)" value={issued.token} onValue={() => undefined} readOnly class="grow mono-input" onFocus={(e) => e.currentTarget.select()} />
        <CopyButton text={issued.token} label="Copy token" />
      </div>
      <p class="hint">
        Either works as <code>Authorization: Bearer …</code> in this database only.
      </p>
    </Modal>
  );
}
