import { useEffect, useState } from 'preact/hooks';
import { allFieldErrors, api, ApiError, fieldError } from '../api.ts';
import { AUTH_SETTINGS, type AuthSettings, type Collection, FIELD_TYPES, type FieldDef, RULES, type RuleKey, SUPERUSERS, type Trigger } from '../model.ts';
import { navigate } from '../router.ts';
import { formatDuration } from '../ui/format.ts';
import { useAction, useLoad } from '../ui/hooks.ts';
import { Badge, Button, CheckField, ErrorBox, Form, Loading, PageHeader, SelectField, Tabs, TextArea, TextField } from '../ui/kit.tsx';
import { confirm, notify } from '../ui/overlays.tsx';
import { useCollections } from './collections.tsx';

// What each field type's options are, as the console edits them (docs/api.md "Fields", docs/files.md).
type OptionKind = 'int' | 'number' | 'text' | 'bool' | 'list' | 'date' | 'collection';
interface OptionSpec {
  key: string;
  label: string;
  kind: OptionKind;
  hint?: string;
}
const OPTIONS: Record<string, OptionSpec[]> = {
  text: [
    { key: 'min', label: 'Min length', kind: 'int' },
    { key: 'max', label: 'Max length', kind: 'int' },
    { key: 'pattern', label: 'Pattern', kind: 'text', hint: 'An RE2 regular expression the value must match, e.g. ^[a-z0-9-]+$' },
  ],
  editor: [{ key: 'convertUrls', label: 'Convert URLs', kind: 'bool' }],
  number: [
    { key: 'min', label: 'Min', kind: 'number' },
    { key: 'max', label: 'Max', kind: 'number' },
    { key: 'noDecimal', label: 'Integers only', kind: 'bool' },
  ],
  bool: [],
  email: [
    { key: 'onlyDomains', label: 'Only domains', kind: 'list', hint: 'Comma-separated; empty allows any.' },
    { key: 'exceptDomains', label: 'Except domains', kind: 'list', hint: 'Comma-separated; not with "Only domains".' },
  ],
  url: [
    { key: 'onlyDomains', label: 'Only domains', kind: 'list', hint: 'Comma-separated; empty allows any.' },
    { key: 'exceptDomains', label: 'Except domains', kind: 'list', hint: 'Comma-separated; not with "Only domains".' },
  ],
  date: [
    { key: 'min', label: 'Earliest date', kind: 'date', hint: 'ISO 8601, e.g. 2024-01-01' },
    { key: 'max', label: 'Latest date', kind: 'date' },
  ],
  select: [
    { key: 'values', label: 'Values', kind: 'list', hint: 'Comma-separated choices.' },
    { key: 'maxSelect', label: 'Max selected', kind: 'int', hint: '1 makes a single choice; more allows several.' },
  ],
  json: [{ key: 'maxSize', label: 'Max size (bytes)', kind: 'int', hint: 'Default 2,000,000.' }],
  relation: [
    { key: 'toCollection', label: 'Related collection', kind: 'collection' },
    { key: 'maxSelect', label: 'Max related records', kind: 'int', hint: '1 for a single relation; empty for 1.' },
    { key: 'minSelect', label: 'Min related records', kind: 'int' },
    { key: 'displayFields', label: 'Display fields', kind: 'list', hint: 'Fields of the related records to show, comma-separated.' },
    { key: 'cascadeDelete', label: 'Delete this record when the related one is deleted', kind: 'bool' },
  ],
  file: [
    { key: 'maxSelect', label: 'Max files', kind: 'int', hint: '1 for a single file.' },
    { key: 'maxSize', label: 'Max file size (bytes)', kind: 'int', hint: 'Default 5,242,880 (5 MiB).' },
    { key: 'mimeTypes', label: 'Allowed types', kind: 'list', hint: 'Comma-separated MIME types, e.g. image/png, application/pdf; empty allows any.' },
    { key: 'thumbs', label: 'Thumbnail sizes', kind: 'list', hint: 'Kept for PocketBase clients, e.g. 100x100.' },
    { key: 'protected', label: 'Protected (downloads need a file token and the view rule)', kind: 'bool' },
  ],
};

interface FieldDraft {
  key: number;
  id?: string;
  name: string;
  type: string;
  required: boolean;
  unique: boolean;
  hidden: boolean;
  presentable: boolean;
  saved: boolean;
  options: Record<string, string | boolean>;
  rest: Record<string, unknown>;
}

interface TriggerDraft {
  key: number;
  action: string;
  url: string;
  method: string;
  headers: string;
  secret: string;
  enabled: boolean;
}

let keys = 1;

function optionToDraft(spec: OptionSpec, value: unknown): string | boolean {
  if (spec.kind === 'bool') return value === true;
  if (Array.isArray(value)) return value.join(', ');
  return value === null || value === undefined ? '' : String(value);
}

function optionFromDraft(spec: OptionSpec, value: string | boolean): unknown {
  if (spec.kind === 'bool') return value === true;
  const text = String(value ?? '').trim();
  if (spec.kind === 'int' || spec.kind === 'number') return text === '' ? null : Number(text);
  if (spec.kind === 'list') return text === '' ? [] : text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  return text;
}

function fieldToDraft(f: FieldDef): FieldDraft {
  const specs = OPTIONS[f.type] ?? [];
  const { id, name, type, required, unique, hidden, presentable, options, ...rest } = f;
  return {
    key: keys++,
    id,
    name,
    type,
    required,
    unique,
    hidden,
    presentable,
    saved: true,
    options: Object.fromEntries(specs.map((s) => [s.key, optionToDraft(s, options?.[s.key])])),
    rest: { ...rest, otherOptions: Object.fromEntries(Object.entries(options ?? {}).filter(([k]) => !specs.some((s) => s.key === k))) },
  };
}

function fieldFromDraft(d: FieldDraft): Record<string, unknown> {
  const specs = OPTIONS[d.type] ?? [];
  const { otherOptions, ...rest } = d.rest as { otherOptions?: Record<string, unknown> };
  const options: Record<string, unknown> = { ...otherOptions };
  for (const s of specs) {
    const v = optionFromDraft(s, d.options[s.key] ?? (s.kind === 'bool' ? false : ''));
    // An empty maxSelect means "the default (1)", not "unlimited".
    if (v === null && s.key === 'maxSelect') continue;
    options[s.key] = v;
  }
  return { ...rest, ...(d.id ? { id: d.id } : {}), name: d.name, type: d.type, required: d.required, unique: d.unique, hidden: d.hidden, presentable: d.presentable, options };
}

function newField(type: string): FieldDraft {
  const specs = OPTIONS[type] ?? [];
  return {
    key: keys++,
    name: '',
    type,
    required: false,
    unique: false,
    hidden: false,
    presentable: false,
    saved: false,
    options: Object.fromEntries(specs.map((s) => [s.key, s.kind === 'bool' ? false : ''])),
    rest: {},
  };
}

function triggerToDraft(t: Trigger): TriggerDraft {
  return {
    key: keys++,
    action: t.action,
    url: t.url,
    method: t.method ?? 'POST',
    headers: t.headers && Object.keys(t.headers).length > 0 ? JSON.stringify(t.headers, null, 2) : '',
    secret: t.secret ?? '',
    enabled: t.enabled !== false,
  };
}

/** An auth collection's settings as the form edits them: numbers and lists as typed. */
interface AuthDraft {
  passwordEnabled: boolean;
  identityFields: string;
  oauth2Enabled: boolean;
  otpEnabled: boolean;
  otpDuration: string;
  otpLength: string;
  mfaEnabled: boolean;
  mfaDuration: string;
  mfaRule: string;
  tokenDuration: string;
}

/** The settings of a collection as the API answers them: at the top level (≥ 0.23), else in `options`. */
function authSettingsOf(c: Collection | undefined): Partial<AuthSettings> {
  return Object.fromEntries(AUTH_SETTINGS.map((k) => [k, c?.[k] ?? c?.options[k]]));
}

function authToDraft(a: Partial<AuthSettings>): AuthDraft {
  const text = (n: number | undefined) => (n === undefined || n === null ? '' : String(n));
  return {
    passwordEnabled: a.passwordAuth?.enabled ?? true,
    identityFields: (a.passwordAuth?.identityFields ?? ['email']).join(', '),
    oauth2Enabled: a.oauth2?.enabled ?? true,
    otpEnabled: a.otp?.enabled ?? false,
    otpDuration: text(a.otp?.duration),
    otpLength: text(a.otp?.length),
    mfaEnabled: a.mfa?.enabled ?? false,
    mfaDuration: text(a.mfa?.duration),
    mfaRule: a.mfa?.rule ?? '',
    tokenDuration: text(a.authToken?.duration),
  };
}

/**
 * The settings to send, each complete and over the stored one (sub-keys the form does not show are
 * kept). An emptied number is sent as null, so the server's range message shows at its field.
 */
function authFromDraft(d: AuthDraft, stored: Partial<AuthSettings>): Record<string, unknown> {
  const num = (t: string) => (t.trim() === '' ? null : Number(t));
  return {
    passwordAuth: { ...stored.passwordAuth, enabled: d.passwordEnabled, identityFields: d.identityFields.split(',').map((s) => s.trim()).filter((s) => s !== '') },
    oauth2: { ...stored.oauth2, enabled: d.oauth2Enabled },
    otp: { ...stored.otp, enabled: d.otpEnabled, duration: num(d.otpDuration), length: num(d.otpLength) },
    mfa: { ...stored.mfa, enabled: d.mfaEnabled, duration: num(d.mfaDuration), rule: d.mfaRule.trim() },
    authToken: { ...stored.authToken, duration: num(d.tokenDuration) },
  };
}

/** Whether an error of allFieldErrors() ("mfa.rule: …", "options.otp.length: …") is about an auth setting. */
const isAuthError = (error: string) => {
  const path = error.split(':')[0].replace(/^options\./, '');
  return AUTH_SETTINGS.some((k) => path === k || path.startsWith(`${k}.`));
};

type Tab = 'fields' | 'rules' | 'auth' | 'triggers' | 'indexes';

/** New collection (no name) or the editor of an existing one. */
export function CollectionEditor({ name }: { name?: string }) {
  // A new collection starts from the server's scaffold, so an auth collection shows the settings it would get.
  const loaded = useLoad(
    async () =>
      name
        ? { collection: await api<Collection>('GET', `/api/collections/${encodeURIComponent(name)}`) }
        : { scaffold: (await api<Record<string, Collection>>('GET', '/api/collections/meta/scaffolds')).auth },
    [name],
  );
  if (loaded.loading && !loaded.data) return <Loading />;
  if (!loaded.data) return <ErrorBox error={loaded.error} />;
  return <Editor collection={loaded.data.collection} scaffold={loaded.data.scaffold} />;
}

function Editor({ collection, scaffold }: { collection?: Collection; scaffold?: Collection }) {
  const others = useCollections();
  const [tab, setTab] = useState<Tab>('fields');
  const [name, setName] = useState(collection?.name ?? '');
  const [type, setType] = useState<string>(collection?.type ?? 'base');
  const [fields, setFields] = useState<FieldDraft[]>(() => collection?.fields.map(fieldToDraft) ?? [newField('text')]);
  const [rules, setRules] = useState<Record<RuleKey, string | null>>(() => ({
    listRule: collection?.listRule ?? null,
    viewRule: collection?.viewRule ?? null,
    createRule: collection?.createRule ?? null,
    updateRule: collection?.updateRule ?? null,
    deleteRule: collection?.deleteRule ?? null,
  }));
  const [triggers, setTriggers] = useState<TriggerDraft[]>(() => (collection?.options.triggers ?? []).map(triggerToDraft));
  const [indexes, setIndexes] = useState((collection?.indexes ?? []).join('\n'));
  const [auth, setAuth] = useState(() => authToDraft(authSettingsOf(collection ?? scaffold)));
  const [addType, setAddType] = useState('text');
  const [localError, setLocalError] = useState<string>();

  const save = useAction(async () => {
    setLocalError(undefined);
    const parsedTriggers: Trigger[] = [];
    for (const [i, t] of triggers.entries()) {
      let headers: Record<string, string> | undefined;
      if (t.headers.trim() !== '') {
        try {
          headers = JSON.parse(t.headers);
        } catch {
          setTab('triggers');
          throw new ApiError(400, 'Trigger headers must be a JSON object.', { options: { triggers: { [i]: { headers: { code: 'validation_invalid_json', message: 'Must be a JSON object of header names to values.' } } } } });
        }
      }
      parsedTriggers.push({ action: t.action, url: t.url.trim(), method: t.method, ...(headers ? { headers } : {}), ...(t.secret.trim() ? { secret: t.secret.trim() } : {}), enabled: t.enabled });
    }
    // The auth settings go at the top level only: a copy left in `options` would be a second,
    // stale value of the same setting.
    const otherOptions = Object.fromEntries(Object.entries(collection?.options ?? {}).filter(([k]) => k !== 'triggers' && !AUTH_SETTINGS.includes(k as never)));
    const body: Record<string, unknown> = {
      // v0.22's key: the collection's own fields, errors at their positions here (under `fields`,
      // PocketBase ≥ 0.23 counts the `id` field first).
      schema: fields.map(fieldFromDraft),
      ...rules,
      // An empty list is sent only to clear stored triggers, so saving changes nothing else.
      options: { ...otherOptions, ...(parsedTriggers.length > 0 || collection?.options.triggers ? { triggers: parsedTriggers } : {}) },
      indexes: indexes.split('\n').map((s) => s.trim()).filter((s) => s !== ''),
      ...(type === 'auth' ? authFromDraft(auth, authSettingsOf(collection ?? scaffold)) : {}),
    };
    if (!collection) Object.assign(body, { name: name.trim(), type });
    const saved = collection
      ? await api<Collection>('PATCH', `/api/collections/${encodeURIComponent(collection.name)}`, { body })
      : await api<Collection>('POST', '/api/collections', { body });
    notify(collection ? `Collection "${saved.name}" saved.` : `Collection "${saved.name}" created.`);
    if (!collection) navigate(`/collections/${encodeURIComponent(saved.name)}`);
    else {
      setFields(saved.fields.map(fieldToDraft));
      setTriggers((saved.options.triggers ?? []).map(triggerToDraft));
      setAuth(authToDraft(authSettingsOf(saved)));
    }
  });

  // After a failed save, show the tab where the first problem is.
  useEffect(() => {
    const data = save.error instanceof ApiError ? save.error.data : {};
    if (data.fields || data.schema) setTab('fields');
    else if (RULES.some((r) => data[r.key])) setTab('rules');
    else if (allFieldErrors(save.error).some(isAuthError)) setTab('auth');
    else if ((data.options as Record<string, unknown> | undefined)?.triggers) setTab('triggers');
    else if (data.indexes) setTab('indexes');
  }, [save.error]);

  const remove = async () => {
    if (!collection) return;
    const ok = await confirm(
      `Delete collection "${collection.name}"?`,
      <>
        <p>
          <strong>This is a soft delete.</strong> The collection's definition, rules and triggers are removed and its records can no longer be reached through the API.
        </p>
        <p>
          The table <code>{collection.name}</code>, its rows and its files stay in the database: creating a collection with the same name again brings them back. Dropping the data
          for good is manual work on the database file.
        </p>
      </>,
      'Delete collection',
    );
    if (!ok) return;
    try {
      await api('DELETE', `/api/collections/${encodeURIComponent(collection.name)}`);
      notify(`Collection "${collection.name}" deleted (its table is kept).`);
      navigate('/collections');
    } catch (err) {
      save.setError(err);
    }
  };

  const fieldsKey = save.error instanceof ApiError && save.error.data.schema ? 'schema' : 'fields';
  const errorCount = (prefix: string) => allFieldErrors(save.error).filter((e) => e.startsWith(prefix)).length;
  const updateField = (key: number, patch: Partial<FieldDraft>) => setFields((list) => list.map((f) => (f.key === key ? { ...f, ...patch } : f)));
  const collectionNames = (others.data ?? []).filter((c) => c.type !== 'view' && c.name !== SUPERUSERS).map((c) => c.name);
  const identityCandidates = ['email', ...fields.filter((f) => f.type === 'text' && f.unique && f.name).map((f) => f.name)];

  return (
    <Form class="editor" onSubmit={() => void save.run()}>
      <PageHeader
        title={collection ? `Edit ${collection.name}` : 'New collection'}
        subtitle={collection ? <a href={`#/collections/${encodeURIComponent(collection.name)}`}>Browse its records</a> : 'Fields are append-only: names and types are fixed once saved.'}
      >
        {collection && !collection.system && (
          <Button variant="danger" onClick={() => void remove()}>
            Delete collection
          </Button>
        )}
        <Button variant="primary" type="submit" busy={save.busy}>
          {collection ? 'Save changes' : 'Create collection'}
        </Button>
      </PageHeader>

      {save.error !== undefined && (
        <ErrorBox error={save.error}>
          {allFieldErrors(save.error).length > 0 && (
            <ul>
              {allFieldErrors(save.error).map((e) => (
                <li key={e}>{e}</li>
              ))}
            </ul>
          )}
        </ErrorBox>
      )}
      {localError && <p class="error-text">{localError}</p>}

      <div class="grid-2">
        <TextField
          label="Collection name"
          value={name}
          onValue={setName}
          disabled={!!collection}
          required
          hint={collection ? 'A collection cannot be renamed.' : 'Letters, digits and _; the table gets this name.'}
          error={fieldError(save.error, 'name')}
        />
        <SelectField
          label="Collection type"
          value={type}
          onValue={setType}
          disabled={!!collection}
          options={collection?.type === 'view' ? ['view'] : [
            { value: 'base', label: 'Base (records)' },
            { value: 'auth', label: 'Auth (users who sign in)' },
          ]}
          error={fieldError(save.error, 'type')}
        />
      </div>

      <Tabs<Tab>
        label="Collection settings"
        value={tab}
        onValue={setTab}
        tabs={[
          { id: 'fields', label: 'Fields', count: errorCount(fieldsKey) || undefined },
          { id: 'rules', label: 'API rules', count: RULES.filter((r) => fieldError(save.error, r.key)).length || undefined },
          ...(type === 'auth' ? [{ id: 'auth' as const, label: 'Authentication', count: allFieldErrors(save.error).filter(isAuthError).length || undefined }] : []),
          { id: 'triggers', label: 'Webhook triggers', count: triggers.length || undefined },
          { id: 'indexes', label: 'Indexes', count: errorCount('indexes') || undefined },
        ]}
      />

      {tab === 'fields' && (
        <section aria-label="Fields" class="stack">
          {type === 'auth' && (
            <p class="note">
              Auth collections also have the system fields <code>email</code>, <code>emailVisibility</code>, <code>verified</code> and a password, managed by Cairn. How
              users sign in is under <strong>Authentication</strong>.
            </p>
          )}
          {fields.length === 0 && <p class="muted">No fields yet.</p>}
          {fields.map((f, i) => (
            <FieldEditor
              key={f.key}
              index={i}
              field={f}
              collectionNames={collectionNames}
              error={(path) => fieldError(save.error, `${fieldsKey}.${i}.${path}`)}
              onChange={(patch) => updateField(f.key, patch)}
              onRemove={() => setFields((list) => list.filter((x) => x.key !== f.key))}
            />
          ))}
          <div class="add-field">
            <SelectField label="New field type" value={addType} onValue={setAddType} options={[...FIELD_TYPES]} />
            <Button onClick={() => setFields((list) => [...list, newField(addType)])}>Add field</Button>
          </div>
        </section>
      )}

      {tab === 'rules' && (
        <section aria-label="API rules" class="stack">
          <p class="note">
            Who may use this collection's records through the API. <strong>Administrators only</strong> when locked; an empty rule lets <strong>everyone</strong> (guests
            too); otherwise a filter such as <code>@request.auth.id != "" && owner = @request.auth.id</code>. Administrators always pass.
          </p>
          {RULES.map((r) => {
            const value = rules[r.key];
            return (
              <fieldset key={r.key} class="rule">
                <legend>{r.label}</legend>
                <CheckField label={`Administrators only (${r.label.toLowerCase()})`} checked={value === null} onValue={(locked) => setRules({ ...rules, [r.key]: locked ? null : '' })} />
                <TextArea
                  label={r.label}
                  hideLabel
                  mono
                  rows={2}
                  value={value ?? ''}
                  disabled={value === null}
                  placeholder={value === null ? 'Administrators only' : 'Empty: everyone may ' + r.what}
                  onValue={(v) => setRules({ ...rules, [r.key]: v })}
                  error={fieldError(save.error, r.key)}
                />
              </fieldset>
            );
          })}
        </section>
      )}

      {tab === 'auth' && type === 'auth' && (
        <AuthSettingsEditor draft={auth} onChange={(patch) => setAuth({ ...auth, ...patch })} error={(path) => fieldError(save.error, path)} identityCandidates={identityCandidates} />
      )}

      {tab === 'triggers' && (
        <section aria-label="Webhook triggers" class="stack">
          <p class="note">
            Requests Cairn sends when records change, from a durable outbox with retries. Deliveries show in <a href="#/webhooks">Webhook logs</a>.
          </p>
          {triggers.map((t, i) => {
            const err = (key: string) => fieldError(save.error, `options.triggers.${i}.${key}`);
            const set = (patch: Partial<TriggerDraft>) => setTriggers((list) => list.map((x) => (x.key === t.key ? { ...x, ...patch } : x)));
            return (
              <fieldset key={t.key} class="card">
                <legend>Trigger {i + 1}</legend>
                <div class="grid-3">
                  <SelectField label="Action" value={t.action} onValue={(v) => set({ action: v })} options={['create', 'update', 'delete']} error={err('action')} />
                  <SelectField label="Method" value={t.method} onValue={(v) => set({ method: v })} options={['POST', 'PUT', 'PATCH', 'DELETE']} error={err('method')} />
                  <CheckField label="Enabled" checked={t.enabled} onValue={(v) => set({ enabled: v })} />
                </div>
                <TextField label="URL" type="url" value={t.url} onValue={(v) => set({ url: v })} placeholder="https://example.com/hooks/orders" error={err('url')} required />
                <TextArea label="Headers (JSON)" mono rows={2} value={t.headers} onValue={(v) => set({ headers: v })} placeholder='{"X-Team": "billing"}' error={err('headers')} />
                <div class="inline">
                  <TextField
                    label="Signing secret"
                    value={t.secret}
                    onValue={(v) => set({ secret: v })}
                    placeholder="whsec_…"
                    hint="Optional Standard Webhooks secret; requests are then signed."
                    error={err('secret')}
                    class="grow"
                  />
                  <Button small onClick={() => set({ secret: newSecret() })}>
                    Generate secret
                  </Button>
                </div>
                <Button small variant="ghost" onClick={() => setTriggers((list) => list.filter((x) => x.key !== t.key))} aria-label={`Remove trigger ${i + 1}`}>
                  Remove trigger
                </Button>
              </fieldset>
            );
          })}
          {triggers.length === 0 && <p class="muted">No triggers.</p>}
          <div>
            <Button onClick={() => setTriggers((list) => [...list, { key: keys++, action: 'create', url: '', method: 'POST', headers: '', secret: '', enabled: true }])}>Add trigger</Button>
          </div>
        </section>
      )}

      {tab === 'indexes' && (
        <section aria-label="Indexes" class="stack">
          <TextArea
            label="Indexes"
            mono
            rows={6}
            value={indexes}
            onValue={setIndexes}
            placeholder={`CREATE INDEX idx_${name || 'posts'}_title ON ${name || 'posts'} (title)`}
            hint="One CREATE [UNIQUE] INDEX statement per line. Unique fields and owner fields are indexed by Cairn already. On PostgreSQL, USING gin (field gin_trgm_ops) lets a ~ search that narrows use an index."
            error={allFieldErrors(save.error).filter((e) => e.startsWith('indexes')).join(' ') || undefined}
          />
          <p class="muted" data-testid="auto-indexes">
            Indexed by Cairn: created{autoIndexed(collection).map((f) => `, ${f}`).join('')}.
          </p>
        </section>
      )}
    </Form>
  );
}

/** The fields Cairn indexes by itself (src/collections/table-sync.ts): unique fields and single
 * relation fields, as saved. */
function autoIndexed(collection: Collection | undefined): string[] {
  if (!collection || collection.type === 'view') return [];
  const single = (f: FieldDef) => {
    const max = f.options.maxSelect;
    return max !== null && (max === undefined || max <= 1);
  };
  const own = collection.fields.flatMap((f) => {
    if (f.type === 'relation' && single(f)) return [`${f.name} (relation)`];
    return f.unique ? [`${f.name} (unique)`] : [];
  });
  return collection.type === 'auth' ? ['email (unique)', ...own] : own;
}

function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

function FieldEditor(props: {
  index: number;
  field: FieldDraft;
  collectionNames: string[];
  error: (path: string) => string | undefined;
  onChange: (patch: Partial<FieldDraft>) => void;
  onRemove: () => void;
}) {
  const { field: f, onChange, error } = props;
  const specs = OPTIONS[f.type] ?? [];
  const legend = `Field ${props.index + 1}${f.name ? `: ${f.name}` : ''}`;
  const setOption = (key: string, v: string | boolean) => onChange({ options: { ...f.options, [key]: v } });
  return (
    <fieldset class="card field-card" aria-label={legend}>
      <legend>
        {legend} <Badge>{f.type}</Badge>
      </legend>
      <div class="grid-2">
        <TextField label="Name" value={f.name} onValue={(v) => onChange({ name: v })} required disabled={f.saved} error={error('name')} hint={f.saved ? 'Saved fields keep their name.' : undefined} />
        <SelectField
          label="Type"
          value={f.type}
          disabled={f.saved}
          onValue={(v) => onChange({ type: v, options: Object.fromEntries((OPTIONS[v] ?? []).map((s) => [s.key, s.kind === 'bool' ? false : ''])) })}
          options={[...FIELD_TYPES]}
          error={error('type')}
        />
      </div>
      <div class="flags">
        <CheckField label="Required" checked={f.required} onValue={(v) => onChange({ required: v })} error={error('required')} />
        <CheckField label="Unique" checked={f.unique} onValue={(v) => onChange({ unique: v })} error={error('unique')} />
        <CheckField label="Hidden" checked={f.hidden} onValue={(v) => onChange({ hidden: v })} hint="Shown to administrators only." />
        <CheckField label="Presentable" checked={f.presentable} onValue={(v) => onChange({ presentable: v })} hint="Names the record in relation pickers." />
      </div>
      {specs.length > 0 && (
        <div class="grid-2 options">
          {specs.map((s) => {
            const err = error(`options.${s.key}`);
            const value = f.options[s.key];
            if (s.kind === 'bool') return <CheckField key={s.key} label={s.label} checked={value === true} onValue={(v) => setOption(s.key, v)} error={err} />;
            if (s.kind === 'collection') {
              return (
                <SelectField
                  key={s.key}
                  label={s.label}
                  value={String(value ?? '')}
                  onValue={(v) => setOption(s.key, v)}
                  options={[{ value: '', label: 'Choose a collection…' }, ...props.collectionNames.map((n) => ({ value: n, label: n }))]}
                  error={err}
                  disabled={f.saved}
                />
              );
            }
            return (
              <TextField
                key={s.key}
                label={s.label}
                type={s.kind === 'int' || s.kind === 'number' ? 'number' : 'text'}
                step={s.kind === 'number' ? 'any' : undefined}
                value={String(value ?? '')}
                onValue={(v) => setOption(s.key, v)}
                hint={s.hint}
                error={err}
              />
            );
          })}
        </div>
      )}
      {error('options') && <p class="error-text">{error('options')}</p>}
      <Button small variant="ghost" onClick={props.onRemove} aria-label={`Remove field ${f.name || props.index + 1}`}>
        Remove field
      </Button>
      {f.saved && <p class="hint">Removing a saved field keeps its column and data in the table; adding it back restores them.</p>}
    </fieldset>
  );
}

/** A duration's hint: the value in words when it is a number, else what the field is for. */
function durationHint(text: string, what: string): string {
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) && n > 0 ? `${formatDuration(n)}. ${what}` : what;
}

/** The Authentication tab of an auth collection: how its users sign in (docs/auth.md "Auth collection settings"). */
function AuthSettingsEditor(props: { draft: AuthDraft; onChange: (patch: Partial<AuthDraft>) => void; error: (path: string) => string | undefined; identityCandidates: string[] }) {
  const { draft: d, onChange, error } = props;
  return (
    <section aria-label="Authentication" class="stack">
      <fieldset class="card">
        <legend>Password</legend>
        <CheckField label="Sign in with a password" checked={d.passwordEnabled} onValue={(v) => onChange({ passwordEnabled: v })} error={error('passwordAuth.enabled')} />
        <TextField
          label="Identity fields"
          value={d.identityFields}
          onValue={(v) => onChange({ identityFields: v })}
          hint={`Comma-separated, looked up in this order when a user signs in: email and unique text fields (here: ${props.identityCandidates.join(', ')}).`}
          error={error('passwordAuth.identityFields') ?? error('passwordAuth')}
        />
      </fieldset>
      <fieldset class="card">
        <legend>OAuth2</legend>
        <CheckField
          label="Sign in with OAuth2"
          checked={d.oauth2Enabled}
          onValue={(v) => onChange({ oauth2Enabled: v })}
          hint="Through the providers configured in Settings."
          error={error('oauth2.enabled') ?? error('oauth2')}
        />
      </fieldset>
      <fieldset class="card">
        <legend>One-time codes (OTP)</legend>
        <CheckField label="Sign in with a code sent by mail" checked={d.otpEnabled} onValue={(v) => onChange({ otpEnabled: v })} error={error('otp.enabled')} />
        <div class="grid-2">
          <TextField
            label="Code lifetime (seconds)"
            type="number"
            value={d.otpDuration}
            onValue={(v) => onChange({ otpDuration: v })}
            hint={durationHint(d.otpDuration, 'From 10 s to a day.')}
            error={error('otp.duration')}
          />
          <TextField label="Code length (digits)" type="number" value={d.otpLength} onValue={(v) => onChange({ otpLength: v })} hint="From 4 to 20." error={error('otp.length')} />
        </div>
      </fieldset>
      <fieldset class="card">
        <legend>Multi-factor authentication (MFA)</legend>
        <CheckField
          label="Ask for a second method"
          checked={d.mfaEnabled}
          onValue={(v) => onChange({ mfaEnabled: v })}
          hint="After a password, OAuth2 or code sign-in, the user signs in again with another of them."
          error={error('mfa.enabled')}
        />
        <TextField
          label="Time for the second method (seconds)"
          type="number"
          value={d.mfaDuration}
          onValue={(v) => onChange({ mfaDuration: v })}
          hint={durationHint(d.mfaDuration, 'From 10 s to a day.')}
          error={error('mfa.duration')}
        />
        <TextArea
          label="MFA rule"
          mono
          rows={2}
          value={d.mfaRule}
          onValue={(v) => onChange({ mfaRule: v })}
          placeholder='e.g. role = "admin"'
          hint="Which accounts need a second method, as a rule over the account; empty: every account."
          error={error('mfa.rule')}
        />
      </fieldset>
      <fieldset class="card">
        <legend>Tokens</legend>
        <TextField
          label="Token lifetime (seconds)"
          type="number"
          value={d.tokenDuration}
          onValue={(v) => onChange({ tokenDuration: v })}
          hint={durationHint(d.tokenDuration, 'How long a sign-in lasts before the app must refresh it.')}
          error={error('authToken.duration') ?? error('authToken')}
        />
      </fieldset>
    </section>
  );
}
