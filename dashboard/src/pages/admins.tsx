import { useState } from 'preact/hooks';
import { type Admin, api, fieldError, type Page } from '../api.ts';
import { formatDate } from '../ui/format.ts';
import { useAction, useLoad, useTasks } from '../ui/hooks.ts';
import { Badge, Button, PageHeader, TextField } from '../ui/kit.tsx';
import { DataList } from '../ui/list.tsx';
import { confirm, FormDialog, notify } from '../ui/overlays.tsx';

const instance = { db: false } as const;

export function AdminsPage({ me }: { me: Admin }) {
  const list = useLoad(() => api<Page<Admin>>('GET', '/api/admins', { ...instance, query: { perPage: 500 } }), []);
  const [editing, setEditing] = useState<Admin | 'new'>();
  const tasks = useTasks(list.reload);
  const remove = (a: Admin) =>
    tasks.run('delete', async () => {
      if (!(await confirm(`Delete administrator ${a.email}?`, <p>They can no longer sign in, and their sessions end at once.</p>, 'Delete administrator'))) return;
      await api('DELETE', `/api/admins/${a.id}`, instance);
      notify(`${a.email} deleted.`);
    });
  return (
    <>
      <PageHeader
        title="Administrators"
        subtitle={
          <>
            Instance-wide accounts that manage every database: the records of the system collection <code>_superusers</code> (PocketBase ≥ 0.23's superusers).
          </>
        }
      >
        <Button variant="primary" onClick={() => setEditing('new')}>
          New administrator
        </Button>
      </PageHeader>
      <DataList
        caption="Administrators"
        load={list}
        error={tasks.error}
        rowKey={(a) => a.id}
        rowName={(a) => `administrator ${a.email}`}
        empty="No administrators."
        columns={[
          { id: 'email', label: 'Email', rowHeader: true, sort: (a) => a.email, cell: (a) => <>{a.email} {a.id === me.id && <Badge tone="info">you</Badge>}</> },
          { id: 'created', label: 'Created', class: 'nowrap', sort: (a) => a.created, cell: (a) => formatDate(a.created) },
        ]}
        actions={(a) => [
          { label: 'Edit', onClick: () => setEditing(a) },
          { label: 'Delete', variant: 'danger', onClick: () => void remove(a) },
        ]}
      />
      {editing && (
        <AdminForm
          admin={editing === 'new' ? undefined : editing}
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

function AdminForm({ admin, onClose, onSaved }: { admin?: Admin; onClose: () => void; onSaved: () => void }) {
  const [email, setEmail] = useState(admin?.email ?? '');
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const action = useAction(async () => {
    const body: Record<string, string> = { email };
    if (password || !admin) Object.assign(body, { password, passwordConfirm: confirmation });
    await api(admin ? 'PATCH' : 'POST', admin ? `/api/admins/${admin.id}` : '/api/admins', { ...instance, body });
    notify(admin ? `${email} saved.` : `${email} can now sign in.`);
    onSaved();
  });
  return (
    <FormDialog title={admin ? `Edit ${admin.email}` : 'New administrator'} onClose={onClose} action={action} submit={admin ? 'Save administrator' : 'Create administrator'}>
      <TextField label="Email" type="email" required value={email} onValue={setEmail} error={fieldError(action.error, 'email')} autoComplete="off" />
      <TextField
        label={admin ? 'New password' : 'Password'}
        type="password"
        required={!admin}
        value={password}
        onValue={setPassword}
        error={fieldError(action.error, 'password')}
        hint={admin ? 'Leave empty to keep it; changing it ends their sessions.' : undefined}
        autoComplete="new-password"
      />
      <TextField label="Confirm password" type="password" required={!admin} value={confirmation} onValue={setConfirmation} error={fieldError(action.error, 'passwordConfirm')} autoComplete="new-password" />
    </FormDialog>
  );
}
