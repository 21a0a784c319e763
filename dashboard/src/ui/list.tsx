import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import { fieldError, messageOf, type Page } from '../api.ts';
import type { Loaded } from './hooks.ts';
import { Button, Empty, ErrorBox, Form, Loading, SelectField, TextField } from './kit.tsx';

// The one list of the console: every screen that lists things (collections, keys, jobs, logs,
// records…) gives its columns and actions to <DataList>, which owns the table and its states, so a
// fix to one list (phones, sorting, accessibility) reaches all of them.

export interface Column<T> {
  /** The column's key; with server sorting, the field the server sorts by. */
  id: string;
  /** The header's text (also the sort button's name: "Sort by <label>"). */
  label: string;
  /** The header is read by screen readers but not shown. */
  hideLabel?: boolean;
  cell: (row: T) => ComponentChildren;
  /** This column names the row: its cells are row headers, kept in view when the table scrolls sideways (put it first). */
  rowHeader?: boolean;
  /** Sortable: `true` sorts by the server (DataList's `sort`/`onSort`); a function sorts the loaded rows by its value. */
  sort?: true | ((row: T) => string | number);
  /** Classes of the column's cells (nowrap, truncate-cell, mono small…). */
  class?: string;
}

export interface RowAction {
  /** The button's text ("Delete"). */
  label: string;
  /** Its accessible name; by default the label and the row's name ("Delete key ci"). */
  name?: string;
  onClick?: () => void;
  /** A link instead of a button. */
  href?: string;
  variant?: 'secondary' | 'primary' | 'danger' | 'ghost';
  busy?: boolean;
  /** For a button that shows or hides the row's details. */
  expanded?: boolean;
}

export interface DataListProps<T> {
  /** The table's caption, read by screen readers (the page's heading is the visible title). */
  caption: string;
  /** The list as useLoad loads it: a page of the API (`{page, totalPages, totalItems, items}`) or an array. */
  load: Loaded<Page<T> | T[]>;
  columns: Array<Column<T>>;
  rowKey: (row: T) => string;
  /** How actions name the row ("key ci" makes "Delete key ci"). */
  rowName?: (row: T) => string;
  /** The buttons or links at the end of each row; `false` entries are left out. */
  actions?: (row: T) => Array<RowAction | false | undefined>;
  /** The empty state's text, and its next action (a button or a hint). */
  empty: string;
  emptyAction?: ComponentChildren;
  /** An error of the page's own (a row action that failed), shown above the list. */
  error?: unknown;
  /** False when the page shows the load error itself (a filter's error under the filter box). */
  showLoadError?: boolean;
  /** Server sorting: the current `sort` parameter (`title`, `-created`) and how to change it. */
  sort?: string;
  onSort?: (sort: string) => void;
  /** Paging of a server page; `what` names the items in the count ("42 keys"). */
  onPage?: (page: number) => void;
  what?: string;
  perPage?: { value: string; options: string[]; onValue: (v: string) => void };
  /** A row's details, shown in a full-width row under it when not undefined. */
  details?: (row: T) => ComponentChildren;
  /** The whole row opens something (its first cell should hold the same action as a button, for keyboards). */
  onRowClick?: (row: T) => void;
  loadingLabel?: string;
  /** Extra class of the table (`records`). */
  class?: string;
}

function sortState(sort: string | undefined, id: string): 'ascending' | 'descending' | 'none' {
  return sort === id ? 'ascending' : sort === `-${id}` ? 'descending' : 'none';
}

export function DataList<T>(props: DataListProps<T>) {
  const { load, columns } = props;
  const captionId = useId();
  const [localSort, setLocalSort] = useState<string>();
  const server = props.onSort !== undefined;
  const sort = server ? props.sort : localSort;
  const data = load.data;
  const page = data && !Array.isArray(data) ? data : undefined;
  let rows = data === undefined ? undefined : Array.isArray(data) ? data : data.items;
  const error = props.error ?? (props.showLoadError === false ? undefined : load.error);

  if (!server && rows && sort) {
    const desc = sort.startsWith('-');
    const by = columns.find((c) => c.id === sort.replace(/^-/, ''))?.sort;
    if (typeof by === 'function') {
      rows = [...rows].sort((a, b) => {
        const x = by(a);
        const y = by(b);
        const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        return desc ? -order : order;
      });
    }
  }
  const toggle = (id: string) => {
    const next = sort === id ? `-${id}` : id;
    if (server) props.onSort!(next);
    else setLocalSort(next);
  };

  const head = (
    <ErrorBox error={error}>
      {!data && load.error !== undefined && (
        <div>
          <Button small onClick={load.reload}>
            Try again
          </Button>
        </div>
      )}
    </ErrorBox>
  );
  if (!rows) return load.loading ? <Loading label={props.loadingLabel} /> : head;
  if (rows.length === 0) {
    return (
      <>
        {head}
        <Empty title={props.empty}>{props.emptyAction}</Empty>
      </>
    );
  }

  const actions = props.actions;
  const span = columns.length + (actions ? 1 : 0);
  return (
    <>
      {head}
      <div class="table-wrap" aria-busy={load.loading ? 'true' : undefined}>
        <table class={`table ${props.class ?? ''}`} aria-labelledby={captionId}>
          <caption id={captionId} class="sr-only">
            {props.caption}
          </caption>
          <thead>
            <tr>
              {columns.map((col) => {
                const state = col.sort ? sortState(sort, col.id) : undefined;
                return (
                  <th key={col.id} scope="col" aria-sort={state} class={col.rowHeader ? 'sticky-col' : undefined}>
                    {col.sort ? (
                      <button type="button" class="sort" onClick={() => toggle(col.id)} aria-label={`Sort by ${col.label}`}>
                        {col.label}
                        <span aria-hidden="true">{state === 'ascending' ? ' ▲' : state === 'descending' ? ' ▼' : ''}</span>
                      </button>
                    ) : col.hideLabel ? (
                      <span class="sr-only">{col.label}</span>
                    ) : (
                      col.label
                    )}
                  </th>
                );
              })}
              {actions && (
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const key = props.rowKey(row);
              const details = props.details?.(row);
              return [
                <tr key={key} class={props.onRowClick ? 'clickable' : undefined} onClick={props.onRowClick && (() => props.onRowClick!(row))}>
                  {columns.map((col) =>
                    col.rowHeader ? (
                      <th key={col.id} scope="row" class={`sticky-col ${col.class ?? ''}`}>
                        {col.cell(row)}
                      </th>
                    ) : (
                      <td key={col.id} class={col.class}>
                        {col.cell(row)}
                      </td>
                    ),
                  )}
                  {actions && (
                    <td class="row-actions" onClick={(e) => e.stopPropagation()}>
                      {actions(row).map((a) => a && <Action key={a.label} action={a} rowName={props.rowName?.(row)} />)}
                    </td>
                  )}
                </tr>,
                details !== undefined && (
                  <tr key={`${key}-details`} class="details-row">
                    <td colSpan={span}>{details}</td>
                  </tr>
                ),
              ];
            })}
          </tbody>
        </table>
      </div>
      {(page && props.onPage) || props.perPage ? (
        <div class="list-foot">
          {props.perPage && <SelectField label="Per page" value={props.perPage.value} onValue={props.perPage.onValue} options={props.perPage.options} />}
          {page && props.onPage && <Pagination page={page.page} totalPages={page.totalPages} totalItems={page.totalItems} onPage={props.onPage} what={props.what} />}
        </div>
      ) : null}
    </>
  );
}

function Action({ action: a, rowName }: { action: RowAction; rowName?: string }) {
  const name = a.name ?? (rowName ? `${a.label} ${rowName}` : undefined);
  const variant = a.variant ?? 'secondary';
  if (a.href) {
    return (
      <a class={`btn btn-small btn-${variant}`} href={a.href} aria-label={name}>
        {a.label}
      </a>
    );
  }
  return (
    <Button small variant={variant} onClick={a.onClick} busy={a.busy} aria-label={name} aria-expanded={a.expanded}>
      {a.label}
    </Button>
  );
}

export function Pagination({ page, totalPages, totalItems, onPage, what = 'items' }: { page: number; totalPages: number; totalItems: number; onPage: (p: number) => void; what?: string }) {
  return (
    <nav class="pagination" aria-label={`Pages of ${what}`}>
      <span class="muted">
        {totalItems} {what}
      </span>
      <Button small onClick={() => onPage(page - 1)} disabled={page <= 1} aria-label="Previous page">
        ‹ Previous
      </Button>
      <span aria-live="polite">
        Page {page} of {Math.max(totalPages, 1)}
      </span>
      <Button small onClick={() => onPage(page + 1)} disabled={page >= totalPages} aria-label="Next page">
        Next ›
      </Button>
    </nav>
  );
}

/**
 * A list's filter in the rule language: the text typed is applied on submit (Enter or "Apply
 * filter"), and the server's message about a bad filter shows under the box. `children` are more
 * fields of the same toolbar. Pair it with DataList's `showLoadError={!filter}`.
 */
export function FilterForm(props: { label: string; filter: string; onFilter: (filter: string) => void; loadError: unknown; placeholder: string; hint: string; children?: ComponentChildren }) {
  const [text, setText] = useState(props.filter);
  const apply = (filter: string) => {
    setText(filter);
    props.onFilter(filter);
  };
  const error = props.filter && props.loadError ? (fieldError(props.loadError, 'filter') ?? messageOf(props.loadError)) : undefined;
  return (
    <Form class="toolbar" role="search" onSubmit={() => apply(text.trim())}>
      <TextField label={props.label} class="grow mono-input" value={text} onValue={setText} placeholder={props.placeholder} error={error} hint={props.hint} />
      {props.children}
      <div class="toolbar-buttons">
        <Button type="submit">Apply filter</Button>
        {props.filter && (
          <Button variant="ghost" onClick={() => apply('')}>
            Clear filter
          </Button>
        )}
      </div>
    </Form>
  );
}
