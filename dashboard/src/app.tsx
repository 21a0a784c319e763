import { useEffect, useState } from 'preact/hooks';
import { api, type Admin, database, session, signIn, signOut } from './api.ts';
import { SUPERUSERS } from './model.ts';
import { AdminsPage } from './pages/admins.tsx';
import { BackupsPage } from './pages/backups.tsx';
import { AdminResetConfirm, ConfirmRecordEmailChange, ConfirmRecordPasswordReset, ConfirmRecordVerification, ForgotPassword, LoginPage, OAuth2RedirectDone, SetupPage } from './pages/auth.tsx';
import { CollectionEditor } from './pages/collection-editor.tsx';
import { CollectionsPage } from './pages/collections.tsx';
import { CronPage } from './pages/cron.tsx';
import { HooksPage } from './pages/hooks.tsx';
import { KeysPage } from './pages/keys.tsx';
import { LogsPage } from './pages/logs.tsx';
import { MigrationsPage } from './pages/migrations.tsx';
import { RecordsPage } from './pages/records.tsx';
import { SettingsPage } from './pages/settings.tsx';
import { Shell } from './pages/shell.tsx';
import { WebhookLogsPage } from './pages/webhook-logs.tsx';
import { WorkflowsPage } from './pages/workflows.tsx';
import { match, navigate, useRoute } from './router.ts';
import { useLoad, useStore } from './ui/hooks.ts';
import { Empty, Loading } from './ui/kit.tsx';
import { ConfirmHost, ToastHost } from './ui/overlays.tsx';

export function App() {
  return (
    <>
      <Root />
      <ConfirmHost />
      <ToastHost />
    </>
  );
}

function Root() {
  const route = useRoute();
  const current = useStore(session);

  // The pages mails link to are for users, signed in or not.
  let params = match('/auth/confirm-password-reset/:token', route.path);
  if (params) return <ConfirmRecordPasswordReset token={params.token} db={route.query.get('db') ?? 'main'} collection={route.query.get('collection') ?? 'users'} />;
  params = match('/auth/confirm-verification/:token', route.path);
  if (params) return <ConfirmRecordVerification token={params.token} db={route.query.get('db') ?? 'main'} collection={route.query.get('collection') ?? 'users'} />;
  params = match('/auth/confirm-email-change/:token', route.path);
  if (params) return <ConfirmRecordEmailChange token={params.token} db={route.query.get('db') ?? 'main'} collection={route.query.get('collection') ?? 'users'} />;
  params = match('/confirm-password-reset/:token', route.path);
  if (params) return <AdminResetConfirm token={params.token} />;
  if (route.path === '/forgot-password') return <ForgotPassword />;
  if (route.path === '/auth/oauth2-redirect-success' || route.path === '/auth/oauth2-redirect-failure') return <OAuth2RedirectDone ok={route.path.endsWith('success')} />;

  if (!current) return <SignedOut />;
  return <SignedIn admin={current.admin} path={route.path} query={route.query} />;
}

function SignedOut() {
  const state = useLoad(() => api<{ hasAdmins: boolean }>('GET', '/api/admins/has-admins', { db: false, anonymous: true }), []);
  if (state.loading && !state.data) return <Loading label="Connecting to Cairn…" />;
  if (state.data && !state.data.hasAdmins) return <SetupPage onDone={state.reload} />;
  return <LoginPage />;
}

function SignedIn({ admin, path, query }: { admin: Admin; path: string; query: URLSearchParams }) {
  const db = useStore(database);
  const [checked, setChecked] = useState(false);
  const superusers = path === `/collections/${SUPERUSERS}` || path === `/collections/${SUPERUSERS}/edit`;

  // The stored token may be revoked (password changed elsewhere): refreshing proves it and renews it.
  useEffect(() => {
    api<{ token: string; admin: Admin }>('POST', '/api/admins/auth-refresh', { db: false })
      .then((r) => signIn(r.token, r.admin))
      .catch(() => undefined)
      .finally(() => setChecked(true));
  }, []);

  useEffect(() => {
    if (path === '/' || path === '/login' || path === '/setup') navigate('/collections', true);
    // `_superusers` (PocketBase ≥ 0.23's administrators) has a fixed definition: its records are the Administrators screen's.
    if (superusers) navigate('/admins', true);
  }, [path]);

  if (!checked) return <Loading label="Checking your session…" />;

  let page;
  let params: Record<string, string> | undefined;
  if (path === '/collections') page = <CollectionsPage key={db} />;
  else if (superusers) page = <Loading />;
  else if (path === '/collections/new') page = <CollectionEditor key={`${db}/new`} />;
  else if ((params = match('/collections/:name/edit', path))) page = <CollectionEditor key={`${db}/${params.name}`} name={params.name} />;
  else if ((params = match('/collections/:name', path))) page = <RecordsPage key={`${db}/${params.name}`} collection={params.name} query={query} />;
  else if (path === '/users') page = <RecordsPage key={`${db}/users`} collection="users" query={query} />;
  else if (path === '/keys') page = <KeysPage key={db} />;
  else if (path === '/webhooks') page = <WebhookLogsPage key={db} />;
  else if (path === '/cron') page = <CronPage key={db} />;
  else if (path === '/workflows' || match('/workflows/:name', path)) page = <WorkflowsPage key={db} selected={match('/workflows/:name', path)?.name} />;
  else if (path === '/hooks') page = <HooksPage />;
  else if (path === '/migrations') page = <MigrationsPage />;
  else if (path === '/logs') page = <LogsPage />;
  else if (path === '/backups') page = <BackupsPage />;
  else if (path === '/settings') page = <SettingsPage />;
  else if (path === '/admins') page = <AdminsPage me={admin} />;
  else page = <Empty title="This page does not exist.">{<a href="#/collections">Go to the collections</a>}</Empty>;

  return (
    <Shell admin={admin} path={path} onSignOut={signOut}>
      {page}
    </Shell>
  );
}
