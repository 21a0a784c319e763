import { useState } from 'preact/hooks';
import { type Admin, api, fieldError, type Page } from '../api.ts';
import { formatDate } from '../ui/format.ts';
import { useAction, useLoad } from '../ui/hooks.ts';
import { Badge, Button, ErrorBox, Loading, PageHeader, TextField } from '../ui/kit.tsx';
import { confirm, Modal, notify } from '../ui/overlays.tsx';

const instance = { db: false } as const;

export function AdminsPage({ me }: { me: Admin }) {
  const list = useLoad(() => api<Page<Admin>>('GET', '/api/admins', { ...instance, query: { perPage: 500 } }), []);
  const [editing, setEditing] = useState<Admin | 'new'>();
  const [rowError, setRowError] = useState<unknown>();
  const remove = async (a: Admin) => {
    if (!(await confirm(`Delete administrator ${a.email}?`, <p>They can no longer sign in, and their sessions end at once.</p>, 'Delete administrator'))) return;
    try {
      await api('DELETE', `/api/admins/${a.id}`, instance);
      notify(`${a.email} deleted.`);
      list.reload();
    } catch (err) {
      setRowError(err);
    }
  };
  return (
    <>
      <PageHeader title="Administrators" subtitle="Instance-wide accounts that manage every database.">
        <Button variant="primary" onClick={() => setEditing('new')}>
          New administrator
        </Button>
      </PageHeader>
      <ErrorBox error={list.error ?? rowError} />
      {list.loading && !list.data ? (
        <Loading />
      ) : (
        <div class="table-wrap">
          <table class="table">
            <caption class="sr-only">Administrators</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data?.items.map((a) => (
                <tr key={a.id}>
                  <th scope="row">
                    {a.email} {a.id === me.id && <Badge tone="info">you</Badge>}
                  </th>
                  <td class="nowrap">{formatDate(a.created)}</td>
                  <td class="row-actions">
                    <Button small onClick={() => setEditing(a)} aria-label={`Edit administrator ${a.email}`}>
                      Edit
                    </Button>
                    <Button small variant="danger" onClick={() => void remove(a)} aria-label={`Delete administrator ${a.email}`}>
                      Delete
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
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
    <Modal title={admin ? `Edit ${admin.email}` : 'New administrator'} onClose={onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void action.run();
        }}
      >
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
        <ErrorBox error={action.error} />
        <div class="form-actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" type="submit" busy={action.busy}>
            {admin ? 'Save administrator' : 'Create administrator'}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
