import { useState } from 'preact/hooks';
import { api, fieldError } from '../api.ts';
import { formatBytes, formatDate } from '../ui/format.ts';
import { useLoad, useTasks } from '../ui/hooks.ts';
import { Button, FilePick, Form, PageHeader, TextField } from '../ui/kit.tsx';
import { DataList } from '../ui/list.tsx';
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
  const tasks = useTasks(list.reload);
  const create = () =>
    tasks.run('create', async () => {
      await api('POST', '/api/backups', { ...instance, body: name.trim() ? { name: name.trim() } : {} });
      setName('');
      notify('Backup taken.');
    });
  const upload = (file: File) =>
    tasks.run('upload', async () => {
      const form = new FormData();
      form.append('file', file);
      await api('POST', '/api/backups/upload', { ...instance, form });
      notify(`${file.name} uploaded.`);
    });
  // Downloads go through a link with a file token: the browser saves the ZIP without holding it in memory.
  const downloadBackup = (b: Backup) =>
    tasks.run(`download ${b.key}`, async () => {
      const { token } = await api<{ token: string }>('POST', '/api/files/token');
      const a = document.createElement('a');
      a.href = `/api/backups/${encodeURIComponent(b.key)}?token=${encodeURIComponent(token)}`;
      a.download = b.key;
      document.body.append(a);
      a.click();
      a.remove();
    });
  const remove = (b: Backup) =>
    tasks.run(`delete ${b.key}`, async () => {
      if (!(await confirm(`Delete ${b.key}?`, <p>The backup file is deleted for good.</p>, 'Delete backup'))) return;
      await api('DELETE', `/api/backups/${encodeURIComponent(b.key)}`, instance);
      notify(`${b.key} deleted.`);
    });
  const restore = (b: Backup) =>
    tasks.run(`restore ${b.key}`, async () => {
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
      <Form class="toolbar" onSubmit={() => void create()}>
        <TextField label="Backup name" value={name} onValue={setName} placeholder="optional, e.g. before_upgrade.zip" error={fieldError(tasks.error, 'name')} />
        <div class="toolbar-buttons">
          <Button variant="primary" type="submit" busy={tasks.busy === 'create'}>
            Take a backup
          </Button>
          <FilePick label="Upload a backup" accept=".zip,application/zip" onFile={(f) => void upload(f)} busy={tasks.busy === 'upload'} />
        </div>
      </Form>
      <DataList
        caption="Backups"
        load={list}
        error={tasks.error}
        rowKey={(b) => b.key}
        rowName={(b) => `backup ${b.key}`}
        empty="No backups yet."
        emptyAction={<p class="muted">Take one above, or upload a backup made elsewhere.</p>}
        columns={[
          { id: 'key', label: 'Name', rowHeader: true, class: 'mono small', sort: (b) => b.key, cell: (b) => b.key },
          { id: 'size', label: 'Size', class: 'nowrap', sort: (b) => b.size, cell: (b) => formatBytes(b.size) },
          { id: 'modified', label: 'Taken', class: 'nowrap', sort: (b) => b.modified, cell: (b) => formatDate(b.modified) },
        ]}
        actions={(b) => [
          { label: 'Download', onClick: () => void downloadBackup(b) },
          { label: 'Restore', onClick: () => void restore(b), busy: tasks.busy === `restore ${b.key}` },
          { label: 'Delete', variant: 'danger', onClick: () => void remove(b) },
        ]}
      />
    </>
  );
}
