import type { ButtonHTMLAttributes, ComponentChildren, FormHTMLAttributes, InputHTMLAttributes, SelectHTMLAttributes, TextareaHTMLAttributes } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { messageOf } from '../api.ts';

// Every control here takes a `label` and renders a real <label for>, and every error is tied to its
// control with aria-describedby and aria-invalid: the console is driven by labels, by people and tests.

interface FieldShell {
  label: string;
  hint?: ComponentChildren;
  error?: string;
  /** The label is read by assistive technology but not shown (a table's filter box, say). */
  hideLabel?: boolean;
  class?: string;
}

function Shell(props: FieldShell & { id: string; children: ComponentChildren }) {
  return (
    <div class={`field ${props.error ? 'has-error' : ''} ${props.class ?? ''}`}>
      <label for={props.id} class={props.hideLabel ? 'sr-only' : undefined}>
        {props.label}
      </label>
      {props.children}
      {props.hint && !props.error && (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="error-text" id={`${props.id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

function described(id: string, props: FieldShell): Record<string, unknown> {
  return {
    'aria-invalid': props.error ? 'true' : undefined,
    'aria-describedby': props.error ? `${id}-error` : props.hint ? `${id}-hint` : undefined,
  };
}

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'label' | 'onInput' | 'value' | 'class'> & FieldShell & { value: string | number; onValue: (v: string) => void };

export function TextField({ label, hint, error, hideLabel, class: cls, value, onValue, ...rest }: InputProps) {
  const id = useId();
  return (
    <Shell id={id} label={label} hint={hint} error={error} hideLabel={hideLabel} class={cls}>
      <input id={id} value={value} onInput={(e) => onValue(e.currentTarget.value)} {...described(id, { label, hint, error })} {...(rest as any)} />
    </Shell>
  );
}

type AreaProps = Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'label' | 'onInput' | 'value' | 'class'> & FieldShell & { value: string; onValue: (v: string) => void; mono?: boolean };

export function TextArea({ label, hint, error, hideLabel, class: cls, value, onValue, mono, ...rest }: AreaProps) {
  const id = useId();
  return (
    <Shell id={id} label={label} hint={hint} error={error} hideLabel={hideLabel} class={cls}>
      <textarea id={id} class={mono ? 'mono' : undefined} value={value} onInput={(e) => onValue(e.currentTarget.value)} spellcheck={!mono} {...described(id, { label, hint, error })} {...(rest as any)} />
    </Shell>
  );
}

export interface Option {
  value: string;
  label: string;
}

type SelectProps = Omit<SelectHTMLAttributes<HTMLSelectElement>, 'label' | 'onChange' | 'value' | 'class'> &
  FieldShell & { value: string; onValue: (v: string) => void; options: Array<Option | string> };

export function SelectField({ label, hint, error, hideLabel, class: cls, value, onValue, options, ...rest }: SelectProps) {
  const id = useId();
  return (
    <Shell id={id} label={label} hint={hint} error={error} hideLabel={hideLabel} class={cls}>
      <select id={id} value={value} onChange={(e) => onValue(e.currentTarget.value)} {...described(id, { label, hint, error })} {...(rest as any)}>
        {options.map((o) => (typeof o === 'string' ? { value: o, label: o } : o)).map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </Shell>
  );
}

export function CheckField(props: { label: string; checked: boolean; onValue: (v: boolean) => void; hint?: string; error?: string; disabled?: boolean; switch?: boolean }) {
  const id = useId();
  return (
    <div class={`check ${props.error ? 'has-error' : ''}`}>
      <input
        id={id}
        type="checkbox"
        role={props.switch ? 'switch' : undefined}
        checked={props.checked}
        disabled={props.disabled}
        onChange={(e) => props.onValue(e.currentTarget.checked)}
        {...described(id, { label: props.label, hint: props.hint, error: props.error })}
      />
      <label for={id}>{props.label}</label>
      {props.hint && !props.error && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="error-text" id={`${id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & { variant?: 'primary' | 'secondary' | 'danger' | 'ghost'; busy?: boolean; small?: boolean; type?: 'button' | 'submit' };

export function Button({ variant = 'secondary', busy, small, type = 'button', children, disabled, class: cls, ...rest }: ButtonProps) {
  return (
    <button type={type} class={`btn btn-${variant} ${small ? 'btn-small' : ''} ${cls ?? ''}`} disabled={disabled || busy} aria-busy={busy ? 'true' : undefined} {...(rest as any)}>
      {busy && <span class="spinner" aria-hidden="true" />}
      {children}
    </button>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children}
    </div>
  );
}

/** An error where it happened, announced to screen readers. */
export function ErrorBox({ error, children }: { error: unknown; children?: ComponentChildren }) {
  if (!error) return null;
  return (
    <div class="error-box" role="alert">
      <strong>{messageOf(error)}</strong>
      {children}
    </div>
  );
}

export function Badge({ tone = 'neutral', children }: { tone?: 'neutral' | 'success' | 'warning' | 'danger' | 'info'; children: ComponentChildren }) {
  return <span class={`badge badge-${tone}`}>{children}</span>;
}

export function PageHeader({ title, subtitle, children }: { title: string; subtitle?: ComponentChildren; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <div>
        <h1>{title}</h1>
        {subtitle && <p class="subtitle">{subtitle}</p>}
      </div>
      {children && <div class="actions">{children}</div>}
    </header>
  );
}

/** A native form (Enter submits) whose submission runs `onSubmit` instead of loading a page. */
export function Form({ onSubmit, children, ...rest }: Omit<FormHTMLAttributes<HTMLFormElement>, 'onSubmit'> & { onSubmit: () => void; children: ComponentChildren }) {
  return (
    <form
      {...(rest as any)}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {children}
    </form>
  );
}

/** A file input shown as a button (its label); the file is handed over and the input cleared for the next one. */
export function FilePick({ label, accept, onFile, busy }: { label: string; accept: string; onFile: (f: File) => void; busy?: boolean }) {
  const id = useId();
  return (
    <div class="file-pick">
      <input
        id={id}
        type="file"
        accept={accept}
        class="sr-only"
        onChange={(e) => {
          const file = e.currentTarget.files?.[0];
          e.currentTarget.value = '';
          if (file) onFile(file);
        }}
      />
      <label for={id} class={`btn btn-secondary ${busy ? 'is-busy' : ''}`}>
        {label}
      </label>
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(t);
  }, [copied]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without the clipboard API (plain http on another host), fall back to a selection copy.
      const area = document.createElement('textarea');
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
  };
  return (
    <Button small onClick={copy} aria-label={label}>
      {copied ? 'Copied ✓' : 'Copy'}
    </Button>
  );
}

/** A JSON value edited as text; `onValid` gets the parsed value while the text parses. */
export function JsonEditor({ label, text, onText, error, hint, rows = 8 }: { label: string; text: string; onText: (t: string) => void; error?: string; hint?: ComponentChildren; rows?: number }) {
  let parseError: string | undefined;
  if (text.trim() !== '') {
    try {
      JSON.parse(text);
    } catch (err) {
      parseError = `Invalid JSON: ${(err as Error).message}`;
    }
  }
  const format = () => {
    try {
      onText(JSON.stringify(JSON.parse(text), null, 2));
    } catch {
      // leave the text as it is; the error is already shown
    }
  };
  return (
    <div class="json-editor">
      <TextArea label={label} value={text} onValue={onText} mono rows={rows} error={error ?? parseError} hint={hint} />
      <Button small variant="ghost" onClick={format} disabled={!!parseError || text.trim() === ''} aria-label={`Format ${label}`}>
        Format
      </Button>
    </div>
  );
}

export function Tabs<T extends string>({ tabs, value, onValue, label }: { tabs: Array<{ id: T; label: string; count?: number }>; value: T; onValue: (t: T) => void; label: string }) {
  const onKey = (e: KeyboardEvent) => {
    const i = tabs.findIndex((t) => t.id === value);
    const next = e.key === 'ArrowRight' ? (i + 1) % tabs.length : e.key === 'ArrowLeft' ? (i - 1 + tabs.length) % tabs.length : -1;
    if (next >= 0) {
      e.preventDefault();
      onValue(tabs[next].id);
      (e.currentTarget as HTMLElement).querySelectorAll<HTMLElement>('[role=tab]')[next]?.focus();
    }
  };
  return (
    <div class="tabs" role="tablist" aria-label={label} onKeyDown={onKey}>
      {tabs.map((t) => (
        <button key={t.id} type="button" role="tab" aria-selected={t.id === value} tabIndex={t.id === value ? 0 : -1} class={t.id === value ? 'active' : ''} onClick={() => onValue(t.id)}>
          {t.label}
          {t.count !== undefined && <span class="count">{t.count}</span>}
        </button>
      ))}
    </div>
  );
}
