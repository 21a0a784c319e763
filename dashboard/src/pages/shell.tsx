import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Admin, api, database, fieldError } from '../api.ts';
import { useAction, useLoad, useStore } from '../ui/hooks.ts';
import { Button, SelectField, TextField } from '../ui/kit.tsx';
import { FormDialog, notify } from '../ui/overlays.tsx';
import { Logo } from './auth.tsx';

const NAV: Array<{ path: string; label: string; icon: string }> = [
  { path: '/collections', label: 'Collections', icon: 'M4 5h16v4H4zM4 11h16v4H4zM4 17h16v3H4z' },
  { path: '/users', label: 'Users', icon: 'M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zm-8 8a8 8 0 0 1 16 0z' },
  { path: '/keys', label: 'API keys', icon: 'M14 7a5 5 0 1 1-4.9 6H7v2H5v2H3v-4l6.1-6.1A5 5 0 0 1 14 7zm2 1.5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z' },
  { path: '/webhooks', label: 'Webhook logs', icon: 'M4 4h16v12H8l-4 4z' },
  { path: '/cron', label: 'Cron jobs', icon: 'M12 3a9 9 0 1 1 0 18 9 9 0 0 1 0-18zm-1 4v6l5 3 .9-1.5-3.9-2.3V7z' },
  { path: '/workflows', label: 'Workflows', icon: 'M5 4h6v6H5zM13 14h6v6h-6zM8 10v4h8v0' },
  { path: '/hooks', label: 'Hooks', icon: 'M8 3v4a4 4 0 0 0 8 0V3h-2v4a2 2 0 0 1-4 0V3zm3 9v5a3 3 0 0 0 6 0v-2h2v2a5 5 0 0 1-10 0v-5z' },
  { path: '/migrations', label: 'Migrations', icon: 'M4 6h10v3H4zM4 11h16v3H4zM4 16h7v3H4zM17 4l4 4-4 4z' },
  { path: '/logs', label: 'Request logs', icon: 'M4 4h16v2H4zM4 9h16v2H4zM4 14h10v2H4zM4 19h13v2H4z' },
  { path: '/backups', label: 'Backups', icon: 'M5 4h14l1 4v12H4V8zm2 2-.5 2h11L17 6zm3 5v3H8l4 4 4-4h-2v-3z' },
  { path: '/settings', label: 'Settings', icon: 'M12 8a4 4 0 1 1 0 8 4 4 0 0 1 0-8zM11 2h2v3h-2zM11 19h2v3h-2zM2 11h3v2H2zM19 11h3v2h-3z' },
  { path: '/admins', label: 'Administrators', icon: 'M12 2l8 3v6c0 5-3.4 9.3-8 11-4.6-1.7-8-6-8-11V5z' },
];

function Icon({ d }: { d: string }) {
  return (
    <svg viewBox="0 0 24 24" class="nav-icon" aria-hidden="true">
      <path d={d} />
    </svg>
  );
}

export function Shell({ admin, path, onSignOut, children }: { admin: Admin; path: string; onSignOut: () => void; children: ComponentChildren }) {
  const db = useStore(database);
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const sidebar = useRef<HTMLElement>(null);
  useEffect(() => setMenuOpen(false), [path]);
  // The menu (phones) takes the focus when it opens, and Escape closes it back to its button.
  useEffect(() => {
    if (!menuOpen) return;
    sidebar.current?.querySelector<HTMLElement>('[aria-current="page"], nav a')?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setMenuOpen(false);
      menuButton.current?.focus();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [menuOpen]);
  return (
    <div class={`shell ${menuOpen ? 'menu-open' : ''}`}>
      <header class="topbar">
        <button ref={menuButton} type="button" class="icon-btn" aria-expanded={menuOpen} aria-controls="sidebar" aria-label={menuOpen ? 'Close menu' : 'Open menu'} onClick={() => setMenuOpen(!menuOpen)}>
          ☰
        </button>
        <span class="brand">
          <Logo /> Cairn
        </span>
        <span class="db-name muted small" title="Database">
          {db}
        </span>
      </header>
      <aside id="sidebar" class="sidebar" ref={sidebar}>
        <div class="brand">
          <Logo /> Cairn
        </div>
        <DatabaseSwitcher />
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => {
              const active = path === item.path || path.startsWith(`${item.path}/`);
              return (
                <li key={item.path}>
                  <a href={`#${item.path}`} class={active ? 'active' : ''} aria-current={active ? 'page' : undefined}>
                    <Icon d={item.icon} />
                    {item.label}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
        <div class="sidebar-foot">
          <span class="muted small" title={admin.email}>
            {admin.email}
          </span>
          <Button small variant="ghost" onClick={onSignOut}>
            Sign out
          </Button>
        </div>
      </aside>
      <div class="scrim" onClick={() => setMenuOpen(false)} aria-hidden="true" />
      <main class="content" id="main">
        {children}
      </main>
    </div>
  );
}

function DatabaseSwitcher() {
  const db = useStore(database);
  const [creating, setCreating] = useState(false);
  const list = useLoad(() => api<Array<{ name: string }>>('GET', '/api/databases', { db: false }), []);
  const names = list.data?.map((d) => d.name) ?? [db];
  if (!names.includes(db)) names.push(db);
  return (
    <div class="db-switcher">
      <SelectField label="Database" value={db} onValue={(v) => database.set(v)} options={names} />
      <Button small variant="ghost" onClick={() => setCreating(true)} aria-label="New database">
        + New
      </Button>
      {creating && (
        <CreateDatabase
          onClose={() => setCreating(false)}
          onCreated={(name) => {
            list.reload();
            database.set(name);
            setCreating(false);
          }}
        />
      )}
    </div>
  );
}

function CreateDatabase({ onClose, onCreated }: { onClose: () => void; onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const action = useAction(async () => {
    const created = await api<{ name: string }>('POST', '/api/databases', { db: false, body: { name } });
    notify(`Database "${created.name}" created.`);
    onCreated(created.name);
  });
  return (
    <FormDialog title="New database" onClose={onClose} action={action} submit="Create database" error={fieldError(action.error, 'name') ? undefined : action.error}>
      <p class="muted">
        A database holds its own collections, records, users, API keys, webhooks and cron jobs. It starts with the <code>users</code> auth collection.
      </p>
      <TextField
        label="Database name"
        value={name}
        onValue={setName}
        required
        pattern="[a-z][a-z0-9_]{0,62}"
        hint="Lower-case letters, digits and _; starts with a letter."
        error={fieldError(action.error, 'name')}
        autoFocus
      />
    </FormDialog>
  );
}
