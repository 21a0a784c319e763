import { useState } from 'preact/hooks';
import { api, database, fieldError, type Page } from '../api.ts';
import { formatDate } from '../ui/format.ts';
import { useAction, useLoad, useStore, useTasks } from '../ui/hooks.ts';
import { Badge, Button, CheckField, CopyButton, PageHeader, TextField } from '../ui/kit.tsx';
import { DataList } from '../ui/list.tsx';
import { confirm, FormDialog, Modal, notify } from '../ui/overlays.tsx';

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
  const list = useLoad(() => api<Page<ApiKey>>('GET', '/api/keys', { query: { page, perPage: 200 } }), [page]);
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<Issued>();
  const tasks = useTasks(list.reload);

  const rotate = (k: ApiKey) =>
    tasks.run('rotate', async () => {
      if (!(await confirm(`Rotate "${k.name}"?`, <p>A new key and token are issued. The current key and its token stop working at once: update the services that use them.</p>, 'Rotate key'))) return;
      setIssued(await api<Issued>('POST', `/api/keys/${k.id}/rotate`));
    });
  const toggle = (k: ApiKey) =>
    tasks.run('toggle', async () => {
      await api('PATCH', `/api/keys/${k.id}`, { body: { enabled: !k.enabled } });
      notify(k.enabled ? `Key "${k.name}" disabled.` : `Key "${k.name}" enabled.`);
    });
  const remove = (k: ApiKey) =>
    tasks.run('delete', async () => {
      if (!(await confirm(`Delete "${k.name}"?`, <p>The key and its token stop working for good.</p>, 'Delete key'))) return;
      await api('DELETE', `/api/keys/${k.id}`);
      notify(`Key "${k.name}" deleted.`);
    });
  const create = (
    <Button variant="primary" onClick={() => setCreating(true)}>
      New API key
    </Button>
  );

  return (
    <>
      <PageHeader title="API keys" subtitle={<>For services calling the <code>{db}</code> database. A key is shown once, when it is created or rotated.</>}>
        {create}
      </PageHeader>
      <DataList
        caption="API keys"
        load={list}
        error={tasks.error}
        rowKey={(k) => k.id}
        rowName={(k) => `key ${k.name}`}
        empty="No API keys in this database."
        emptyAction={create}
        onPage={setPage}
        what="keys"
        columns={[
          { id: 'name', label: 'Name', rowHeader: true, sort: (k) => k.name, cell: (k) => k.name },
          { id: 'roles', label: 'Roles', cell: (k) => (k.roles.length ? k.roles.map((r) => <Badge key={r} tone={r === 'admin' ? 'warning' : 'neutral'}>{r}</Badge>) : <span class="muted">none</span>) },
          { id: 'status', label: 'Status', sort: (k) => Number(k.enabled), cell: (k) => (k.enabled ? <Badge tone="success">enabled</Badge> : <Badge tone="danger">disabled</Badge>) },
          { id: 'created', label: 'Created', class: 'nowrap', sort: (k) => k.created, cell: (k) => formatDate(k.created) },
        ]}
        actions={(k) => [
          { label: k.enabled ? 'Disable' : 'Enable', onClick: () => void toggle(k) },
          { label: 'Rotate', onClick: () => void rotate(k) },
          { label: 'Delete', variant: 'danger', onClick: () => void remove(k) },
        ]}
      />
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
    <FormDialog title="New API key" onClose={onClose} action={action} submit="Create key">
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
    </FormDialog>
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
