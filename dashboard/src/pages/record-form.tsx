import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, database, fieldError, type Page } from '../api.ts';
import { AUTH_FIELDS, type Collection, type FieldDef, fileUrl, isImage, type RecordData, recordTitle } from '../model.ts';
import { formatDate } from '../ui/format.ts';
import { useAction, useLoad, useStore } from '../ui/hooks.ts';
import { Button, CheckField, ErrorBox, Form, JsonEditor, Loading, SelectField, TextArea, TextField } from '../ui/kit.tsx';
import { confirm, Modal, notify } from '../ui/overlays.tsx';

type Values = Record<string, any>;

// maxSelect is normalized by the server: 1 (the default) is a single value; more, or null for a
// relation, a list.
const multiple = (f: FieldDef) => (f.type === 'select' || f.type === 'relation' || f.type === 'file') && f.options.maxSelect !== 1;

function zero(f: FieldDef): unknown {
  if (multiple(f)) return [];
  if (f.type === 'number') return '';
  if (f.type === 'bool') return false;
  if (f.type === 'json') return '';
  return '';
}

function toInput(f: FieldDef, v: unknown): unknown {
  if (f.type === 'json') return v === null || v === undefined ? '' : JSON.stringify(v, null, 2);
  if (f.type === 'number') return v === null || v === undefined ? '' : String(v);
  if (f.type === 'date') return typeof v === 'string' && v ? v.slice(0, 16).replace(' ', 'T') : '';
  return v ?? zero(f);
}

function fromInput(f: FieldDef, v: any): unknown {
  if (f.type === 'json') return v.trim() === '' ? null : JSON.parse(v);
  if (f.type === 'number') return v === '' ? null : Number(v);
  // datetime-local has no zone: the console shows and takes dates in UTC, as they are stored.
  if (f.type === 'date') return v ? `${v.length === 16 ? `${v}:00` : v}.000Z` : '';
  return v;
}

/** Creates or edits one record in a side panel. */
export function RecordPanel(props: { collection: Collection; recordId?: string; onClose: () => void; onChanged: () => void; onImpersonate: (r: RecordData) => void }) {
  const { collection, recordId, onClose, onChanged } = props;
  const record = useLoad(
    () => (recordId ? api<RecordData>('GET', `/api/collections/${encodeURIComponent(collection.name)}/records/${recordId}`) : Promise.resolve(undefined)),
    [recordId],
  );
  const title = recordId ? `Edit ${collection.name} record` : `New ${collection.name} record`;
  return (
    <Modal title={title} onClose={onClose} side>
      {recordId && record.loading && !record.data ? (
        <Loading />
      ) : recordId && !record.data ? (
        <ErrorBox error={record.error} />
      ) : (
        <RecordForm
          collection={collection}
          record={record.data}
          onSaved={(saved) => {
            onChanged();
            notify(recordId ? 'Record saved.' : `Record ${saved.id} created.`);
            onClose();
          }}
          onDeleted={() => {
            onChanged();
            notify('Record deleted.');
            onClose();
          }}
          onCancel={onClose}
          onImpersonate={(r) => {
            // The token's dialog replaces the panel: a dialog over a dialog would be two modals for one task.
            onClose();
            props.onImpersonate(r);
          }}
        />
      )}
    </Modal>
  );
}

function RecordForm(props: {
  collection: Collection;
  record?: RecordData;
  onSaved: (r: RecordData) => void;
  onDeleted: () => void;
  onCancel: () => void;
  onImpersonate: (r: RecordData) => void;
}) {
  const { collection, record, onSaved, onDeleted, onCancel } = props;
  const isAuth = collection.type === 'auth';
  const [values, setValues] = useState<Values>(() => {
    const v: Values = {};
    for (const f of collection.fields) v[f.name] = record ? toInput(f, record[f.name]) : f.default !== undefined && f.default !== null ? toInput(f, f.default) : zero(f);
    if (isAuth) {
      v.email = record?.email ?? '';
      v.emailVisibility = record?.emailVisibility ?? false;
      v.verified = record?.verified ?? false;
      v.password = '';
      v.passwordConfirm = '';
    }
    return v;
  });
  const [uploads, setUploads] = useState<Record<string, File[]>>({});
  const [removed, setRemoved] = useState<Record<string, string[]>>({});
  const set = (name: string, v: unknown) => setValues((old) => ({ ...old, [name]: v }));

  const save = useAction(async () => {
    const data: Values = {};
    for (const f of collection.fields) {
      if (f.type === 'file') {
        if (removed[f.name]?.length) data[`${f.name}-`] = removed[f.name];
        continue;
      }
      data[f.name] = fromInput(f, values[f.name]);
    }
    if (isAuth) {
      for (const k of AUTH_FIELDS) data[k] = values[k];
      if (values.password) {
        data.password = values.password;
        data.passwordConfirm = values.passwordConfirm;
      }
    }
    const form = new FormData();
    form.append('@jsonPayload', JSON.stringify(data));
    for (const f of collection.fields) {
      for (const file of uploads[f.name] ?? []) form.append(multiple(f) ? `${f.name}+` : f.name, file);
    }
    const path = `/api/collections/${encodeURIComponent(collection.name)}/records${record ? `/${record.id}` : ''}`;
    onSaved(await api<RecordData>(record ? 'PATCH' : 'POST', path, { form }));
  });

  const remove = async () => {
    if (!record) return;
    if (!(await confirm('Delete this record?', <p>Record <code>{record.id}</code> of {collection.name} is deleted for good, with its files. Relations to it are settled as their fields say (cleared or cascaded).</p>, 'Delete record'))) return;
    try {
      await api('DELETE', `/api/collections/${encodeURIComponent(collection.name)}/records/${record.id}`);
      onDeleted();
    } catch (err) {
      save.setError(err);
    }
  };

  const sendMail = async (kind: 'request-verification' | 'request-password-reset') => {
    try {
      await api('POST', `/api/collections/${encodeURIComponent(collection.name)}/${kind}`, { body: { email: values.email } });
      notify(kind === 'request-verification' ? 'Verification mail sent.' : 'Password reset mail sent.');
    } catch (err) {
      save.setError(err);
    }
  };

  return (
    <Form class="stack" onSubmit={() => void save.run()}>
      {record && (
        <dl class="meta">
          <dt>id</dt>
          <dd class="mono">{record.id}</dd>
          <dt>created</dt>
          <dd>{formatDate(record.created)}</dd>
          <dt>updated</dt>
          <dd>{formatDate(record.updated)}</dd>
        </dl>
      )}
      {isAuth && (
        <fieldset class="card">
          <legend>Account</legend>
          <TextField label="Email" type="email" value={values.email} onValue={(v) => set('email', v)} error={fieldError(save.error, 'email')} autoComplete="off" />
          <div class="flags">
            <CheckField label="Email visible to others" checked={values.emailVisibility} onValue={(v) => set('emailVisibility', v)} />
            <CheckField label="Verified" checked={values.verified} onValue={(v) => set('verified', v)} error={fieldError(save.error, 'verified')} />
          </div>
          <div class="grid-2">
            <TextField
              label={record ? 'New password' : 'Password'}
              type="password"
              autoComplete="new-password"
              value={values.password}
              onValue={(v) => set('password', v)}
              error={fieldError(save.error, 'password')}
              hint={record ? 'Leave empty to keep it.' : undefined}
            />
            <TextField label="Confirm password" type="password" autoComplete="new-password" value={values.passwordConfirm} onValue={(v) => set('passwordConfirm', v)} error={fieldError(save.error, 'passwordConfirm')} />
          </div>
          {record && (
            <div class="inline">
              <Button small onClick={() => void sendMail('request-verification')} disabled={record.verified}>
                Send verification mail
              </Button>
              <Button small onClick={() => void sendMail('request-password-reset')}>
                Send password reset mail
              </Button>
              <Button small onClick={() => props.onImpersonate(record)}>
                Sign in as this user
              </Button>
            </div>
          )}
        </fieldset>
      )}
      {collection.fields.map((f) => (
        <FieldInput
          key={f.name}
          field={f}
          value={values[f.name]}
          onValue={(v) => set(f.name, v)}
          error={fieldError(save.error, f.name)}
          record={record}
          collection={collection}
          uploads={uploads[f.name] ?? []}
          onUploads={(files) => setUploads({ ...uploads, [f.name]: files })}
          removed={removed[f.name] ?? []}
          onRemoved={(names) => setRemoved({ ...removed, [f.name]: names })}
        />
      ))}
      <ErrorBox error={save.error} />
      <div class="form-actions sticky-actions">
        {record && (
          <Button variant="danger" onClick={() => void remove()} class="push-left">
            Delete record
          </Button>
        )}
        <Button onClick={onCancel}>Cancel</Button>
        <Button variant="primary" type="submit" busy={save.busy}>
          {record ? 'Save record' : 'Create record'}
        </Button>
      </div>
    </Form>
  );
}

interface InputProps {
  field: FieldDef;
  value: any;
  onValue: (v: any) => void;
  error?: string;
  record?: RecordData;
  collection: Collection;
  uploads: File[];
  onUploads: (f: File[]) => void;
  removed: string[];
  onRemoved: (n: string[]) => void;
}

function FieldInput(p: InputProps) {
  const f = p.field;
  const label = f.required ? `${f.name} *` : f.name;
  const common = { label, error: p.error, 'aria-required': f.required ? 'true' : undefined } as const;
  switch (f.type) {
    case 'bool':
      return <CheckField label={f.name} checked={p.value === true} onValue={p.onValue} error={p.error} />;
    case 'number':
      return <TextField {...common} type="number" step={f.options.noDecimal ? '1' : 'any'} value={p.value} onValue={p.onValue} />;
    case 'email':
      return <TextField {...common} type="email" value={p.value} onValue={p.onValue} />;
    case 'url':
      return <TextField {...common} type="url" value={p.value} onValue={p.onValue} placeholder="https://" />;
    case 'date':
      return <TextField {...common} type="datetime-local" step="1" value={p.value} onValue={p.onValue} hint="UTC" />;
    case 'editor':
      return <TextArea {...common} rows={6} value={p.value} onValue={p.onValue} hint="HTML" />;
    case 'json':
      return <JsonEditor label={label} text={p.value} onText={p.onValue} error={p.error} rows={6} />;
    case 'select': {
      const values: string[] = f.options.values ?? [];
      if (!multiple(f)) return <SelectField {...common} value={p.value} onValue={p.onValue} options={[{ value: '', label: '—' }, ...values.map((v) => ({ value: v, label: v }))]} />;
      const chosen: string[] = p.value ?? [];
      return (
        <fieldset class={`card ${p.error ? 'has-error' : ''}`}>
          <legend>{label}</legend>
          <div class="flags">
            {values.map((v) => (
              <CheckField key={v} label={v} checked={chosen.includes(v)} onValue={(on) => p.onValue(on ? [...chosen, v] : chosen.filter((x) => x !== v))} />
            ))}
          </div>
          {p.error && <p class="error-text">{p.error}</p>}
        </fieldset>
      );
    }
    case 'relation':
      return <RelationPicker {...p} label={label} />;
    case 'file':
      return <FileInput {...p} label={label} />;
    default:
      return <TextField {...common} value={p.value} onValue={p.onValue} />;
  }
}

function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Chooses related records: a searchable list of the target collection, radios or checkboxes. */
function RelationPicker(p: InputProps & { label: string }) {
  const f = p.field;
  const many = multiple(f);
  const [search, setSearch] = useState('');
  const target = useLoad(() => api<Collection>('GET', `/api/collections/${encodeURIComponent(f.options.toCollection || f.options.collectionId)}`), [f.name]);
  const filter = useMemo(() => {
    const q = search.trim();
    if (!q || !target.data) return '';
    const names = ['id', ...(target.data.type === 'auth' ? ['email'] : []), ...target.data.fields.filter((x) => ['text', 'email', 'url', 'select'].includes(x.type) && !multiple(x)).map((x) => x.name)];
    return names.map((n) => `${n} ~ ${quote(q)}`).join(' || ');
  }, [search, target.data]);
  const options = useLoad(
    (signal) => (target.data ? api<Page<RecordData>>('GET', `/api/collections/${encodeURIComponent(target.data.name)}/records`, { query: { perPage: 50, filter, sort: '-created' }, signal }) : Promise.resolve(undefined)),
    [target.data, filter],
  );
  const chosen: string[] = many ? (p.value ?? []) : p.value ? [p.value] : [];
  const display = (r: RecordData) => {
    const shown = (f.options.displayFields ?? []).map((k: string) => r[k]).filter(Boolean);
    return shown.length > 0 ? shown.join(' · ') : recordTitle(r, target.data);
  };
  const items = options.data?.items ?? [];
  // Chosen records not on the current page of results stay visible, so they can be unchosen.
  const missing = chosen.filter((id) => !items.some((r) => r.id === id));
  return (
    <fieldset class={`card relation ${p.error ? 'has-error' : ''}`}>
      <legend>{p.label}</legend>
      <TextField label={`Search ${f.options.toCollection ?? 'records'}`} value={search} onValue={setSearch} type="search" placeholder="Type to search" />
      <ErrorBox error={target.error ?? options.error} />
      <div class="choice-list" role="group" aria-label={`${f.name} choices`}>
        {!many && (
          <label class="choice">
            <input type="radio" name={`rel-${f.name}`} checked={chosen.length === 0} onChange={() => p.onValue('')} /> None
          </label>
        )}
        {missing.map((id) => (
          <label class="choice" key={id}>
            <input type={many ? 'checkbox' : 'radio'} name={`rel-${f.name}`} checked onChange={() => p.onValue(many ? chosen.filter((x) => x !== id) : '')} /> <span class="mono">{id}</span>
          </label>
        ))}
        {items.map((r) => (
          <label class="choice" key={r.id}>
            <input
              type={many ? 'checkbox' : 'radio'}
              name={`rel-${f.name}`}
              checked={chosen.includes(r.id)}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                if (!many) p.onValue(r.id);
                else p.onValue(on ? [...chosen, r.id] : chosen.filter((x) => x !== r.id));
              }}
            />{' '}
            {display(r)} <span class="muted mono small">{r.id}</span>
          </label>
        ))}
        {options.loading && <Loading />}
        {!options.loading && items.length === 0 && <p class="muted">No records found.</p>}
      </div>
      {p.error && <p class="error-text">{p.error}</p>}
    </fieldset>
  );
}

/** File tokens for protected files, shared by the previews of one panel (they last two minutes). */
function useFileToken(needed: boolean): string | undefined {
  const [token, setToken] = useState<string>();
  useEffect(() => {
    if (!needed) return;
    api<{ token: string }>('POST', '/api/files/token').then((r) => setToken(r.token), () => undefined);
  }, [needed]);
  return token;
}

function FileInput(p: InputProps & { label: string }) {
  const f = p.field;
  const db = useStore(database);
  const many = multiple(f);
  const current: string[] = p.record ? [p.record[f.name]].flat().filter(Boolean) : [];
  const token = useFileToken(f.options.protected === true && current.length > 0);
  const kept = current.filter((n) => !p.removed.includes(n));
  const previews = useMemo(() => p.uploads.map((file) => ({ file, url: file.type.startsWith('image/') ? URL.createObjectURL(file) : undefined })), [p.uploads]);
  useEffect(() => () => previews.forEach((x) => x.url && URL.revokeObjectURL(x.url)), [previews]);
  const accept = (f.options.mimeTypes ?? []).join(',') || undefined;
  return (
    <fieldset class={`card ${p.error ? 'has-error' : ''}`}>
      <legend>{p.label}</legend>
      <ul class="files">
        {kept.map((name) => {
          const url = p.record && (!f.options.protected || token) ? fileUrl(p.collection.name, p.record.id, name, db, token) : undefined;
          return (
            <li key={name}>
              {url && isImage(name) ? <img src={url} alt={`Preview of ${name}`} class="thumb" /> : <span class="file-icon" aria-hidden="true">📄</span>}
              {url ? (
                <a href={url} target="_blank" rel="noreferrer" class="truncate">
                  {name}
                </a>
              ) : (
                <span class="truncate">{name}</span>
              )}
              <Button small variant="ghost" onClick={() => p.onRemoved([...p.removed, name])} aria-label={`Remove file ${name}`}>
                Remove
              </Button>
            </li>
          );
        })}
        {previews.map(({ file, url }) => (
          <li key={file.name + file.size}>
            {url ? <img src={url} alt={`Preview of ${file.name}`} class="thumb" /> : <span class="file-icon" aria-hidden="true">⬆</span>}
            <span class="truncate">
              {file.name} <span class="muted small">(new)</span>
            </span>
            <Button small variant="ghost" onClick={() => p.onUploads(p.uploads.filter((x) => x !== file))} aria-label={`Undo the upload of ${file.name}`}>
              Undo
            </Button>
          </li>
        ))}
      </ul>
      {p.removed.length > 0 && (
        <p class="hint">
          {p.removed.length} file(s) will be removed on save.{' '}
          <button type="button" class="link" onClick={() => p.onRemoved([])}>
            Keep them
          </button>
        </p>
      )}
      <div class="field">
        <label for={`file-${f.name}`}>{many ? `Add files to ${f.name}` : kept.length > 0 || p.uploads.length > 0 ? `Replace ${f.name}` : `Upload ${f.name}`}</label>
        <input
          id={`file-${f.name}`}
          type="file"
          multiple={many}
          accept={accept}
          aria-invalid={p.error ? 'true' : undefined}
          aria-describedby={p.error ? `file-${f.name}-error` : undefined}
          onChange={(e) => {
            const files = [...(e.currentTarget.files ?? [])];
            p.onUploads(many ? [...p.uploads, ...files] : files.slice(0, 1));
            e.currentTarget.value = '';
          }}
        />
      </div>
      {p.error && (
        <p class="error-text" id={`file-${f.name}-error`}>
          {p.error}
        </p>
      )}
    </fieldset>
  );
}
