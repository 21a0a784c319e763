import { useState } from 'preact/hooks';
import { api, fieldError, tokenClaims } from '../api.ts';
import { type Collection, type RecordData, recordTitle } from '../model.ts';
import { formatDate, formatDuration } from '../ui/format.ts';
import { useAction } from '../ui/hooks.ts';
import { Button, CopyButton, ErrorBox, Form, TextArea, TextField } from '../ui/kit.tsx';
import { Modal } from '../ui/overlays.tsx';

/**
 * "Sign in as" a user of an auth collection (PocketBase ≥ 0.23's impersonation, docs/auth.md): the
 * administrator gets a token that acts as the user, to see what they see. The token lives in this
 * dialog's state only: it is never the console's session, nor kept anywhere once the dialog closes.
 */
export function ImpersonateDialog({ collection, record, onClose }: { collection: Collection; record: RecordData; onClose: () => void }) {
  const who = recordTitle(record, collection);
  const [duration, setDuration] = useState('');
  const [token, setToken] = useState<string>();
  const action = useAction(async () => {
    const body = duration.trim() === '' ? {} : { duration: Number(duration) };
    const answer = await api<{ token: string }>('POST', `/api/collections/${encodeURIComponent(collection.name)}/impersonate/${encodeURIComponent(record.id)}`, { body });
    setToken(answer.token);
  });
  const lifetime = collection.authToken?.duration ?? collection.options.authToken?.duration;
  const claims = token ? tokenClaims(token) : undefined;

  return (
    <Modal title={`Sign in as ${who}`} onClose={onClose}>
      {token === undefined ? (
        <Form class="stack" onSubmit={() => void action.run()}>
          <p class="note">
            A token that acts as <strong>{who}</strong> in this database, to see and do what they can. It cannot be refreshed, and the console does not keep it.
          </p>
          <TextField
            label="Token lifetime (seconds)"
            type="number"
            value={duration}
            onValue={setDuration}
            placeholder={lifetime ? String(lifetime) : undefined}
            hint={lifetime ? `Empty: the collection's token lifetime, ${formatDuration(lifetime)}.` : "Empty: the collection's token lifetime."}
            error={fieldError(action.error, 'duration')}
            autoFocus
          />
          <ErrorBox error={fieldError(action.error, 'duration') ? undefined : action.error} />
          <div class="form-actions">
            <Button onClick={onClose}>Cancel</Button>
            <Button variant="primary" type="submit" busy={action.busy}>
              Create token
            </Button>
          </div>
        </Form>
      ) : (
        <div class="stack">
          <p class="note warning" role="alert">
            Anyone holding this token acts as {who}. Copy it now: it is not shown again.
          </p>
          <TextArea label={`Token of ${who}`} mono rows={5} value={token} onValue={() => undefined} readOnly onFocus={(e) => e.currentTarget.select()} />
          <div class="inline">
            <CopyButton text={token} label="Copy token" />
          </div>
          <p class="hint">
            {claims?.exp && claims.iat ? (
              <>
                Valid until {formatDate(new Date(claims.exp * 1000).toISOString())} ({formatDuration(claims.exp - claims.iat)}).{' '}
              </>
            ) : null}
            It <strong>cannot be refreshed</strong>: when it expires, create another. Send it as <code>Authorization: Bearer …</code>.
          </p>
          <div class="form-actions">
            <Button variant="primary" onClick={onClose}>
              Done
            </Button>
          </div>
        </div>
      )}
    </Modal>
  );
}
