import { useState } from 'preact/hooks';
import { api, fieldError } from '../api.ts';
import { useAction, useLoad } from '../ui/hooks.ts';
import { Badge, Button, CheckField, ErrorBox, Form, Loading, PageHeader, SelectField, TextField } from '../ui/kit.tsx';
import { notify } from '../ui/overlays.tsx';

interface Meta {
  appName: string;
  appUrl: string;
  senderName: string;
  senderAddress: string;
}

interface Provider {
  name: string;
  displayName: string;
  clientId: string;
  clientSecret?: string;
  authUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  scopes: string[];
  enabled: boolean;
}

interface Settings {
  meta: Meta;
  oauth2: { providers: Provider[] };
  smtp?: { enabled: boolean; host: string; port: number };
}

const instance = { db: false } as const;
const BUILT_IN = ['google', 'github', 'gitlab', 'discord', 'microsoft'];

export function SettingsPage() {
  const settings = useLoad(() => api<Settings>('GET', '/api/settings', instance), []);
  if (settings.loading && !settings.data) return <Loading />;
  if (!settings.data) return <ErrorBox error={settings.error} />;
  return (
    <>
      <PageHeader title="Settings" subtitle="Instance-wide: they apply to every database." />
      <MetaForm meta={settings.data.meta} />
      <MailSection smtp={settings.data.smtp} />
      <Providers initial={settings.data.oauth2.providers} />
    </>
  );
}

function MetaForm({ meta }: { meta: Meta }) {
  const [value, setValue] = useState(meta);
  const save = useAction(async () => {
    const r = await api<Settings>('PATCH', '/api/settings', { ...instance, body: { meta: value } });
    setValue(r.meta);
    notify('Application settings saved.');
  });
  const err = (k: keyof Meta) => fieldError(save.error, `meta.${k}`);
  return (
    <Form class="card section" aria-labelledby="meta-title" onSubmit={() => void save.run()}>
      <h2 id="meta-title">Application</h2>
      <p class="muted">How mails name the instance, and the address their links open (this server's, for the pages under /_/).</p>
      <div class="grid-2">
        <TextField label="Application name" value={value.appName} onValue={(v) => setValue({ ...value, appName: v })} error={err('appName')} />
        <TextField label="Application URL" type="url" value={value.appUrl} onValue={(v) => setValue({ ...value, appUrl: v })} error={err('appUrl')} />
        <TextField label="Sender name" value={value.senderName} onValue={(v) => setValue({ ...value, senderName: v })} error={err('senderName')} />
        <TextField label="Sender address" type="email" value={value.senderAddress} onValue={(v) => setValue({ ...value, senderAddress: v })} error={err('senderAddress')} />
      </div>
      <ErrorBox error={save.error} />
      <div class="form-actions">
        <Button variant="primary" type="submit" busy={save.busy}>
          Save application settings
        </Button>
      </div>
    </Form>
  );
}

function MailSection({ smtp }: { smtp?: Settings['smtp'] }) {
  const [email, setEmail] = useState('');
  const [template, setTemplate] = useState('verification');
  const send = useAction(async () => {
    await api('POST', '/api/settings/test/email', { ...instance, body: { email, template } });
    notify(`Test mail sent to ${email}.`);
  });
  return (
    <Form class="card section" aria-labelledby="mail-title" onSubmit={() => void send.run()}>
      <h2 id="mail-title">Mail delivery</h2>
      {smtp?.enabled ? (
        <p>
          <Badge tone="success">SMTP</Badge> Mail goes through{' '}
          <code>
            {smtp.host}:{smtp.port}
          </code>{' '}
          (<code>CAIRN_SMTP_URL</code> when set, else the <code>smtp</code> settings).
        </p>
      ) : (
        <p>
          <Badge tone="warning">no SMTP server</Badge> Mails are written as <code>.eml</code> files under the data directory's <code>mail/</code> folder. Set{' '}
          <code>CAIRN_SMTP_URL</code> (e.g. <code>smtp://user:pass@host:587</code>) and restart, or enable the <code>smtp</code> settings through{' '}
          <code>PATCH /api/settings</code>, to send them.
        </p>
      )}
      <div class="grid-2">
        <TextField label="Send a test mail to" type="email" required value={email} onValue={setEmail} error={fieldError(send.error, 'email')} />
        <SelectField
          label="Template"
          value={template}
          onValue={setTemplate}
          options={[
            { value: 'verification', label: 'Email verification' },
            { value: 'password-reset', label: 'Password reset' },
          ]}
          error={fieldError(send.error, 'template')}
        />
      </div>
      <ErrorBox error={send.error} />
      <div class="form-actions">
        <Button type="submit" busy={send.busy}>
          Send test mail
        </Button>
      </div>
    </Form>
  );
}

function Providers({ initial }: { initial: Provider[] }) {
  const [providers, setProviders] = useState<Array<Provider & { scopesText: string }>>(() => initial.map((p) => ({ ...p, clientSecret: '', scopesText: p.scopes.join(' ') })));
  const [addName, setAddName] = useState('google');
  const save = useAction(async () => {
    const body = providers.map(({ scopesText, ...p }) => ({ ...p, scopes: scopesText.split(/[\s,]+/).filter(Boolean) }));
    const r = await api<Settings>('PATCH', '/api/settings', { ...instance, body: { oauth2: { providers: body } } });
    setProviders(r.oauth2.providers.map((p) => ({ ...p, clientSecret: '', scopesText: p.scopes.join(' ') })));
    notify('OAuth2 providers saved.');
  });
  const set = (i: number, patch: Partial<Provider & { scopesText: string }>) => setProviders((list) => list.map((p, j) => (i === j ? { ...p, ...patch } : p)));
  const add = () => {
    const name = addName === 'custom' ? `oidc${providers.length + 1}` : addName;
    setProviders([...providers, { name, displayName: '', clientId: '', clientSecret: '', authUrl: '', tokenUrl: '', userInfoUrl: '', scopes: [], scopesText: '', enabled: true }]);
  };
  return (
    <Form class="card section" aria-labelledby="oauth-title" onSubmit={() => void save.run()}>
      <h2 id="oauth-title">OAuth2 providers</h2>
      <p class="muted">Sign-in with other accounts for users of every database. Built-in names fill in their URLs; any other name is a generic OAuth2/OIDC provider.</p>
      {providers.length === 0 && <p class="muted">No providers.</p>}
      {providers.map((p, i) => {
        const err = (k: string) => fieldError(save.error, `oauth2.providers.${i}.${k}`);
        const builtIn = BUILT_IN.includes(p.name);
        return (
          <fieldset key={i} class="card">
            <legend>{p.displayName || p.name}</legend>
            <div class="grid-3">
              <TextField label="Provider name" value={p.name} onValue={(v) => set(i, { name: v })} error={err('name')} />
              <TextField label="Display name" value={p.displayName} onValue={(v) => set(i, { displayName: v })} error={err('displayName')} />
              <CheckField label="Enabled" checked={p.enabled} onValue={(v) => set(i, { enabled: v })} />
            </div>
            <div class="grid-2">
              <TextField label="Client ID" value={p.clientId} onValue={(v) => set(i, { clientId: v })} error={err('clientId')} autoComplete="off" />
              <TextField label="Client secret" type="password" value={p.clientSecret ?? ''} onValue={(v) => set(i, { clientSecret: v })} placeholder="unchanged" hint="Never shown again; leave empty to keep the stored one." error={err('clientSecret')} autoComplete="off" />
            </div>
            <div class="grid-3">
              <TextField label="Authorization URL" type="url" value={p.authUrl} onValue={(v) => set(i, { authUrl: v })} placeholder={builtIn ? 'built in' : 'https://'} error={err('authUrl')} />
              <TextField label="Token URL" type="url" value={p.tokenUrl} onValue={(v) => set(i, { tokenUrl: v })} placeholder={builtIn ? 'built in' : 'https://'} error={err('tokenUrl')} />
              <TextField label="User info URL" type="url" value={p.userInfoUrl} onValue={(v) => set(i, { userInfoUrl: v })} placeholder={builtIn ? 'built in' : 'https://'} error={err('userInfoUrl')} />
            </div>
            <TextField label="Scopes" value={p.scopesText} onValue={(v) => set(i, { scopesText: v })} placeholder="openid email profile" error={err('scopes')} />
            <Button small variant="ghost" onClick={() => setProviders(providers.filter((_, j) => j !== i))} aria-label={`Remove provider ${p.name}`}>
              Remove provider
            </Button>
          </fieldset>
        );
      })}
      <div class="add-field">
        <SelectField label="Provider to add" value={addName} onValue={setAddName} options={[...BUILT_IN, { value: 'custom', label: 'Other (OAuth2/OIDC)' }]} />
        <Button onClick={add}>Add provider</Button>
      </div>
      <ErrorBox error={save.error} />
      <div class="form-actions">
        <Button variant="primary" type="submit" busy={save.busy}>
          Save providers
        </Button>
      </div>
    </Form>
  );
}
