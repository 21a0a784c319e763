import { api } from '../api.ts';
import { formatDate, fromNow } from '../ui/format.ts';
import { type Loaded, useLoad } from '../ui/hooks.ts';
import { Button, PageHeader } from '../ui/kit.tsx';
import { DataList } from '../ui/list.tsx';

/** `GET /api/hooks`: what the application code loaded (src/hooks/runtime.ts `HookStatus`). */
interface HookStatus {
  dir: string | null;
  loadedAt: string | null;
  files: string[];
  handlers: Array<{ event: string; collections: string[]; source: string }>;
  routes: Array<{ method: string; path: string; source: string }>;
  cron: Array<{ name: string; schedule: string; source: string }>;
  lastError: { message: string; file: string | null; line: number | null; at: string } | null;
}

/** A file's name as the hooks directory holds it (the server lists absolute paths). */
function shortName(file: string, dir: string | null): string {
  return dir && file.startsWith(`${dir}/`) ? file.slice(dir.length + 1) : file;
}

function part<T>(status: Loaded<HookStatus>, pick: (s: HookStatus) => T[]): Loaded<T[]> {
  return { ...status, data: status.data && pick(status.data) };
}

/**
 * The Hooks screen (read-only): the files loaded from the hooks directory, their handlers, routes and
 * cron jobs, and the last load error (a broken edit in development mode). Hooks are code installed
 * with the server; nothing here changes them (docs/hooks.md).
 */
export function HooksPage() {
  const status = useLoad(() => api<HookStatus>('GET', '/api/hooks', { db: false }), []);
  const s = status.data;
  const name = (file: string) => shortName(file, s?.dir ?? null);
  return (
    <>
      <PageHeader
        title="Hooks"
        subtitle={
          <>
            Application code loaded from {s?.dir ? <code>{s.dir}</code> : 'the hooks directory'}
            {s?.loadedAt ? <> · loaded <time dateTime={s.loadedAt} title={formatDate(s.loadedAt)}>{fromNow(s.loadedAt)}</time></> : null}. Read-only: hooks change with their files.
          </>
        }
      >
        <Button onClick={status.reload}>Refresh</Button>
      </PageHeader>
      {s?.lastError && (
        <div class="error-box" role="alert">
          <strong>The last reload failed; the hooks loaded before it still run.</strong>
          <p class="mono small">
            {s.lastError.file ? `${name(s.lastError.file)}${s.lastError.line ? `:${s.lastError.line}` : ''}: ` : ''}
            {s.lastError.message}
          </p>
        </div>
      )}
      <h2>Files</h2>
      <DataList
        caption="Hook files"
        load={part(status, (x) => x.files.map((file) => ({ file })))}
        rowKey={(f) => f.file}
        empty="No hook files are loaded."
        emptyAction={<p class="muted">Put TypeScript or JavaScript files in the hooks directory and restart the server (docs/hooks.md).</p>}
        columns={[{ id: 'file', label: 'File', rowHeader: true, sort: (f) => f.file, cell: (f) => <code>{name(f.file)}</code> }]}
      />
      <h2>Record handlers</h2>
      <DataList
        caption="Record event handlers"
        load={part(status, (x) => x.handlers.map((h, i) => ({ ...h, i })))}
        rowKey={(h) => String(h.i)}
        empty="No record event handlers."
        columns={[
          { id: 'event', label: 'Event', rowHeader: true, sort: (h) => h.event, cell: (h) => <code>{h.event}</code> },
          { id: 'collections', label: 'Collections', cell: (h) => (h.collections.length > 0 ? h.collections.join(', ') : <span class="muted">every collection</span>) },
          { id: 'source', label: 'File', sort: (h) => h.source, cell: (h) => <code>{name(h.source)}</code> },
        ]}
      />
      <h2>Routes</h2>
      <DataList
        caption="Routes added by hooks"
        load={part(status, (x) => x.routes)}
        rowKey={(r) => `${r.method} ${r.path}`}
        empty="No routes."
        columns={[
          { id: 'route', label: 'Route', rowHeader: true, sort: (r) => r.path, cell: (r) => <code>{`${r.method} ${r.path}`}</code> },
          { id: 'source', label: 'File', cell: (r) => <code>{name(r.source)}</code> },
        ]}
      />
      <h2>Cron jobs</h2>
      <DataList
        caption="Cron jobs added by hooks"
        load={part(status, (x) => x.cron)}
        rowKey={(c) => c.name}
        empty="No cron jobs."
        columns={[
          { id: 'name', label: 'Name', rowHeader: true, sort: (c) => c.name, cell: (c) => c.name },
          { id: 'schedule', label: 'Schedule (UTC)', cell: (c) => <code>{c.schedule}</code> },
          { id: 'source', label: 'File', cell: (c) => <code>{name(c.source)}</code> },
        ]}
      />
    </>
  );
}
