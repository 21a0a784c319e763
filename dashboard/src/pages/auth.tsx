import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { type Admin, ApiError, api, fieldError, signIn } from '../api.ts';
import { navigate } from '../router.ts';
import { useAction } from '../ui/hooks.ts';
import { Button, ErrorBox, Form, TextField } from '../ui/kit.tsx';

function Card({ title, intro, children }: { title: string; intro?: ComponentChildren; children: ComponentChildren }) {
  return (
    <main class="auth-page">
      <div class="auth-card">
        <div class="brand brand-large" aria-hidden="true">
          <Logo /> Cairn
        </div>
        <h1>{title}</h1>
        {intro && <p class="muted">{intro}</p>}
        {children}
      </div>
    </main>
  );
}

export function Logo() {
  return (
    <svg class="logo" viewBox="0 0 32 32" aria-hidden="true">
      <ellipse cx="16" cy="26" rx="11" ry="4" />
      <ellipse cx="16" cy="18" rx="8" ry="3.6" />
      <ellipse cx="16" cy="11" rx="5.5" ry="3" />
      <ellipse cx="16" cy="5" rx="3" ry="2.2" />
    </svg>
  );
}

type AuthResult = { token: string; admin: Admin };

/** A new password and its confirmation, each with the server's error about it. */
function NewPassword(props: { labels: [string, string]; password: string; onPassword: (v: string) => void; confirmation: string; onConfirmation: (v: string) => void; error: unknown }) {
  return (
    <>
      <TextField label={props.labels[0]} type="password" autoComplete="new-password" required value={props.password} onValue={props.onPassword} error={fieldError(props.error, 'password')} />
      <TextField label={props.labels[1]} type="password" autoComplete="new-password" required value={props.confirmation} onValue={props.onConfirmation} error={fieldError(props.error, 'passwordConfirm')} />
    </>
  );
}

export function SetupPage({ onDone }: { onDone: () => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const action = useAction(async () => {
    try {
      const r = await api<AuthResult>('POST', '/api/admins/init', { db: false, anonymous: true, body: { email, password, passwordConfirm: confirmation } });
      signIn(r.token, r.admin);
      navigate('/collections', true);
    } catch (err) {
      // Someone else created the first administrator meanwhile: sign in instead.
      if (err instanceof ApiError && err.status === 403) onDone();
      throw err;
    }
  });
  return (
    <Card title="Create the first administrator" intro="This instance has no administrator yet. The account you create here manages every database of it.">
      <Form onSubmit={() => void action.run()}>
        <TextField label="Email" type="email" autoComplete="username" required value={email} onValue={setEmail} error={fieldError(action.error, 'email')} />
        <NewPassword labels={['Password', 'Confirm password']} password={password} onPassword={setPassword} confirmation={confirmation} onConfirmation={setConfirmation} error={action.error} />
        <ErrorBox error={action.error} />
        <Button variant="primary" type="submit" busy={action.busy} class="btn-block">
          Create administrator
        </Button>
      </Form>
    </Card>
  );
}

export function LoginPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction(async () => {
    const r = await api<AuthResult>('POST', '/api/admins/auth-with-password', { db: false, anonymous: true, body: { identity: email, password } });
    signIn(r.token, r.admin);
  });
  return (
    <Card title="Sign in" intro="Administrators only.">
      <Form onSubmit={() => void action.run()}>
        <TextField label="Email" type="email" autoComplete="username" required value={email} onValue={setEmail} autoFocus />
        <TextField label="Password" type="password" autoComplete="current-password" required value={password} onValue={setPassword} />
        <ErrorBox error={action.error} />
        <Button variant="primary" type="submit" busy={action.busy} class="btn-block">
          Sign in
        </Button>
      </Form>
      <p class="auth-foot">
        <a href="#/forgot-password">Forgot your password?</a>
      </p>
    </Card>
  );
}

export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const action = useAction(async () => {
    await api('POST', '/api/admins/request-password-reset', { db: false, anonymous: true, body: { email } });
    setSent(true);
  });
  return (
    <Card title="Reset your password" intro="Administrators get a link by mail to choose a new password.">
      {sent ? (
        <p role="status">If {email} belongs to an administrator, a link is on its way. It is valid for 30 minutes.</p>
      ) : (
        <Form onSubmit={() => void action.run()}>
          <TextField label="Email" type="email" required value={email} onValue={setEmail} error={fieldError(action.error, 'email')} />
          <ErrorBox error={action.error} />
          <Button variant="primary" type="submit" busy={action.busy} class="btn-block">
            Send reset link
          </Button>
        </Form>
      )}
      <p class="auth-foot">
        <a href="#/login">Back to sign in</a>
      </p>
    </Card>
  );
}

function NewPasswordForm({ submit, doneText }: { submit: (password: string, confirmation: string) => Promise<unknown>; doneText: string }) {
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    await submit(password, confirmation);
    setDone(true);
  });
  if (done) return <p role="status" class="success-text">{doneText}</p>;
  return (
    <Form onSubmit={() => void action.run()}>
      <NewPassword labels={['New password', 'Confirm new password']} password={password} onPassword={setPassword} confirmation={confirmation} onConfirmation={setConfirmation} error={action.error} />
      <ErrorBox error={action.error} />
      <Button variant="primary" type="submit" busy={action.busy} class="btn-block">
        Set new password
      </Button>
    </Form>
  );
}

export function AdminResetConfirm({ token }: { token: string }) {
  return (
    <Card title="Choose a new password" intro="For your administrator account. Every session signed in with the old password ends.">
      <NewPasswordForm
        submit={(password, passwordConfirm) => api('POST', '/api/admins/confirm-password-reset', { db: false, anonymous: true, body: { token, password, passwordConfirm } })}
        doneText="Your password is changed. You can sign in with it now."
      />
      <p class="auth-foot">
        <a href="#/login">Go to sign in</a>
      </p>
    </Card>
  );
}

export function ConfirmRecordPasswordReset({ token, db, collection }: { token: string; db: string; collection: string }) {
  return (
    <Card title="Choose a new password" intro="Enter the new password for your account. Your other sessions end when it is set.">
      <NewPasswordForm
        submit={(password, passwordConfirm) =>
          api('POST', `/api/collections/${encodeURIComponent(collection)}/confirm-password-reset`, { db, anonymous: true, body: { token, password, passwordConfirm } })
        }
        doneText="Your password is changed. You can close this page and sign in to the app with it."
      />
    </Card>
  );
}

export function ConfirmRecordVerification({ token, db, collection }: { token: string; db: string; collection: string }) {
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    await api('POST', `/api/collections/${encodeURIComponent(collection)}/confirm-verification`, { db, anonymous: true, body: { token } });
    setDone(true);
  });
  return (
    <Card title="Verify your email" intro="Confirm that this address is yours.">
      {done ? (
        <p role="status" class="success-text">
          Your email address is verified. You can close this page.
        </p>
      ) : (
        <>
          <ErrorBox error={action.error} />
          <Button variant="primary" busy={action.busy} onClick={() => void action.run()} class="btn-block">
            Verify my email
          </Button>
        </>
      )}
    </Card>
  );
}

export function ConfirmRecordEmailChange({ token, db, collection }: { token: string; db: string; collection: string }) {
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction(async () => {
    await api('POST', `/api/collections/${encodeURIComponent(collection)}/confirm-email-change`, { db, anonymous: true, body: { token, password } });
    setDone(true);
  });
  return (
    <Card title="Confirm your new email" intro="Enter your account's password to move it to this address.">
      {done ? (
        <p role="status" class="success-text">
          Your account now uses this address. You can close this page and sign in to the app with it.
        </p>
      ) : (
        <Form onSubmit={() => void action.run()}>
          <TextField label="Password" type="password" autoComplete="current-password" required value={password} onValue={setPassword} error={fieldError(action.error, 'password')} />
          <ErrorBox error={action.error} />
          <Button variant="primary" type="submit" busy={action.busy} class="btn-block">
            Confirm new email
          </Button>
        </Form>
      )}
    </Card>
  );
}

/**
 * Where `/api/oauth2-redirect` sends an OAuth2 sign-in's popup (PocketBase's paths): the app that
 * opened it has the code through its realtime connection and usually closes it first.
 */
export function OAuth2RedirectDone({ ok }: { ok: boolean }) {
  return (
    <Card title={ok ? 'Signed in' : 'Sign-in failed'}>
      <p role="status" class={ok ? 'success-text' : undefined}>
        {ok ? 'You can close this window and go back to the app.' : 'The sign-in did not complete. Close this window and try again from the app.'}
      </p>
    </Card>
  );
}
