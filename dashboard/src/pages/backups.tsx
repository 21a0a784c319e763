import { useState } from 'preact/hooks';
import { api, fieldError } from '../api.ts';
import { formatBytes, formatDate } from '../ui/format.ts';
import { useLoad } from '../ui/hooks.ts';
import { Button, Empty, ErrorBox, Loading, PageHeader, TextField } from '../ui/kit.tsx';
import { confirm, notify } from '../ui/overlays.tsx';

interface Backup {
  key: string;
  size: number;
  modified: string;
}

const instance = { db: false } as const;

/** Backups of the whole instance (PocketBase v0.22's /api/backups); SQLite only. */
export function BackupsPage() {
  const list = useLoad(() => api<Backup[]>('GET', '/api/backups', instance), []);
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState<string>();
  const act = async (label: string, what: () => Promise<unknown>) => {
    setError(undefined);
    setBusy(label);
    try {
      await what();
      list.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(undefined);
    }
  };
  const create = () =>
    act('create', async () => {
      await api('POST', '/api/backups', { ...instance, body: name.trim() ? { name: name.trim() } : {} });
      setName('');
      notify('Backup taken.');
    });
  const upload = (file: File) =>
    act('upload', async () => {
      const form = new FormData();
      form.append('file', file);
      await api('POST', '/api/backups/upload', { ...instance, form });
      notify(`${file.name} uploaded.`);
    });
  // Downloads go through a link with a file token: the browser saves the ZIP without holding it in memory.
  const downloadBackup = (b: Backup) =>
    act(`download ${b.key}`, async () => {
      const { token } = await api<{ token: string }>('POST', '/api/files/token');
      const a = document.createElement('a');
      a.href = `/api/backups/${encodeURIComponent(b.key)}?token=${encodeURIComponent(token)}`;
      a.download = b.key;
      document.body.append(a);
      a.click();
      a.remove();
    });
  const remove = (b: Backup) =>
    act(`delete ${b.key}`, async () => {
      if (!(await confirm(`Delete ${b.key}?`, <p>The backup file is deleted for good.</p>, 'Delete backup'))) return;
      await api('DELETE', `/api/backups/${encodeURIComponent(b.key)}`, instance);
      notify(`${b.key} deleted.`);
    });
  const restore = (b: Backup) =>
    act(`restore ${b.key}`, async () => {
      const ok = await confirm(
        `Restore ${b.key}?`,
        <>
          <p>
            <strong>Every database, file, setting and administrator is replaced</strong> by the backup's. Changes made since it was taken are lost.
          </p>
          <p>Writes are refused while the restore runs; afterwards you may have to sign in again.</p>
        </>,
        'Restore backup',
      );
      if (!ok) return;
      await api('POST', `/api/backups/${encodeURIComponent(b.key)}/restore`, instance);
      notify(`${b.key} restored.`);
    });
  return (
    <>
      <PageHeader title="Backups" subtitle="ZIP archives of every database, the uploaded files and the settings, taken without stopping writes." />
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <TextField label="Backup name" value={name} onValue={setName} placeholder="optional, e.g. before_upgrade.zip" error={fieldError(error, 'name')} />
        <div class="toolbar-buttons">
          <Button variant="primary" type="submit" busy={busy === 'create'}>
            Take a backup
          </Button>
          <div class="file-pick">
            <input
              id="backup-upload"
              type="file"
              accept=".zip,application/zip"
              class="sr-only"
              onChange={(e) => {
                const file = e.currentTarget.files?.[0];
                e.currentTarget.value = '';
                if (file) void upload(file);
              }}
            />
            <label for="backup-upload" class="btn btn-secondary">
              Upload a backup
            </label>
          </div>
        </div>
      </form>
      <ErrorBox error={error ?? list.error} />
      {list.loading && !list.data ? (
        <Loading />
      ) : list.data?.length === 0 ? (
        <Empty title="No backups yet." />
      ) : (
        list.data && (
          <div class="table-wrap">
            <table class="table">
              <caption class="sr-only">Backups</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Size</th>
                  <th scope="col">Taken</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((b) => (
                  <tr key={b.key}>
                    <th scope="row" class="mono small">
                      {b.key}
                    </th>
                    <td>{formatBytes(b.size)}</td>
                    <td class="nowrap">{formatDate(b.modified)}</td>
                    <td class="row-actions">
                      <Button small onClick={() => void downloadBackup(b)} aria-label={`Download backup ${b.key}`}>
                        Download
                      </Button>
                      <Button small onClick={() => void restore(b)} busy={busy === `restore ${b.key}`} aria-label={`Restore backup ${b.key}`}>
                        Restore
                      </Button>
                      <Button small variant="danger" onClick={() => void remove(b)} aria-label={`Delete backup ${b.key}`}>
                        Delete
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      )}
    </>
  );
}
