import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { Store } from '../api.ts';
import { useStore } from './hooks.ts';
import { Button, ErrorBox, Form } from './kit.tsx';

/**
 * A modal on the native <dialog>: the browser traps focus, Escape closes it, and the page behind is
 * inert. `side` makes it a sheet on the right (record editing), full width on phones.
 */
export function Modal(props: { title: string; onClose: () => void; children: ComponentChildren; footer?: ComponentChildren; side?: boolean; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const onClose = useRef(props.onClose);
  onClose.current = props.onClose;
  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement as HTMLElement | null;
    dialog.showModal();
    const closed = () => onClose.current();
    dialog.addEventListener('close', closed);
    return () => {
      dialog.removeEventListener('close', closed);
      if (dialog.open) dialog.close();
      opener?.focus?.();
    };
  }, []);
  return (
    <dialog ref={ref} class={`modal ${props.side ? 'modal-side' : ''} ${props.wide ? 'modal-wide' : ''}`} aria-labelledby={titleId}>
      <div class="modal-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" class="icon-btn" aria-label="Close" onClick={() => ref.current?.close()}>
          ×
        </button>
      </div>
      <div class="modal-body">{props.children}</div>
      {props.footer && <div class="modal-foot">{props.footer}</div>}
    </dialog>
  );
}

/**
 * A dialog holding one form: its fields, the error of the last submission, Cancel and the submit
 * button (Enter in a field submits). `action` is a useAction() whose run() submits.
 */
export function FormDialog(props: {
  title: string;
  onClose: () => void;
  action: { run: () => Promise<boolean>; busy: boolean; error: unknown };
  submit: string;
  children: ComponentChildren;
  /** The error shown above the buttons, when it is not the action's own (one already shown at its field). */
  error?: unknown;
  side?: boolean;
}) {
  return (
    <Modal title={props.title} onClose={props.onClose} side={props.side}>
      <Form class="stack" onSubmit={() => void props.action.run()}>
        {props.children}
        <ErrorBox error={'error' in props ? props.error : props.action.error} />
        <div class="form-actions">
          <Button onClick={props.onClose}>Cancel</Button>
          <Button variant="primary" type="submit" busy={props.action.busy}>
            {props.submit}
          </Button>
        </div>
      </Form>
    </Modal>
  );
}

interface ConfirmRequest {
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  resolve: (ok: boolean) => void;
}

const pending = new Store<ConfirmRequest | null>(null);

/** Asks before a destructive action; resolves true when confirmed. */
export function confirm(title: string, message: ComponentChildren, confirmLabel: string, danger = true): Promise<boolean> {
  return new Promise((resolve) => pending.set({ title, message, confirmLabel, danger, resolve }));
}

export function ConfirmHost() {
  const req = useStore(pending);
  if (!req) return null;
  const done = (ok: boolean) => {
    pending.set(null);
    req.resolve(ok);
  };
  return (
    <Modal
      title={req.title}
      onClose={() => done(false)}
      footer={
        <>
          <Button onClick={() => done(false)}>Cancel</Button>
          <Button variant={req.danger ? 'danger' : 'primary'} onClick={() => done(true)} autoFocus>
            {req.confirmLabel}
          </Button>
        </>
      }
    >
      <div class="confirm-message">{req.message}</div>
    </Modal>
  );
}

interface Toast {
  id: number;
  text: string;
  tone: 'success' | 'error';
}

const toasts = new Store<Toast[]>([]);
let nextToast = 1;

/** A short notice of an outcome, read out by screen readers (errors where they happen stay inline). */
export function notify(text: string, tone: Toast['tone'] = 'success'): void {
  const toast = { id: nextToast++, text, tone };
  toasts.set([...toasts.get(), toast]);
  setTimeout(() => toasts.set(toasts.get().filter((t) => t.id !== toast.id)), 4000);
}

export function ToastHost() {
  const list = useStore(toasts);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((t) => (
        <div key={t.id} class={`toast toast-${t.tone}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}
