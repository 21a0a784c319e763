import type { Note } from './schema.ts';
import type { Generation } from './source.ts';

/** What an import carried (or, with `--dry-run`, would carry), and what it left behind with why. */
export interface ImportReport {
  source: string;
  generation: Generation;
  database: string;
  driver: 'sqlite' | 'postgres';
  dryRun: boolean;
  /** The database did not exist and is created by the import. */
  createsDatabase: boolean;
  collections: CollectionReport[];
  administrators: { carried: number; skipped: Note[] };
  oauth2Links: { carried: number; skipped: number };
  /** Rows of `_authOrigins` (the devices accounts signed in from). */
  authOrigins: { carried: number; skipped: number };
  /** pb_migrations files PocketBase had applied (its `_migrations` rows of `.js`/`.ts` files), now the database's history. */
  migrations: number;
  /** Sections of Cairn's settings written from PocketBase's. */
  settings: string[];
  /** What was renamed, carried changed, left behind, and other notes (each with its `kind`). */
  notCarried: Note[];
  /** Wall time of the import in milliseconds (not set for a dry run). */
  ms?: number;
  /** Of which copying the records (not set for a dry run). */
  recordsMs?: number;
}

export interface CollectionReport {
  name: string;
  type: string;
  /** `name type` of each field, as Cairn holds it. */
  fields: string[];
  records: number;
  files: number;
  indexes: number;
  merged: boolean;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The report as the command prints it. */
export function formatReport(r: ImportReport): string {
  const lines: string[] = [];
  const generation = r.generation === 'current' ? 'PocketBase 0.23 or later' : 'PocketBase before 0.23';
  lines.push(`${r.dryRun ? 'Dry run: nothing was changed. ' : ''}${generation}: ${r.source}`);
  lines.push(`Into database "${r.database}" (${r.driver === 'postgres' ? 'PostgreSQL' : 'SQLite'})${r.createsDatabase ? `, ${r.dryRun ? 'which would be created' : 'created for it'}` : ''}.`);
  lines.push('');
  const verb = r.dryRun ? 'would be carried' : 'carried';
  lines.push(`Collections ${verb} (${r.collections.length}):`);
  for (const c of r.collections) {
    const what = [c.type, c.merged ? "replaces Cairn's default users" : ''].filter(Boolean).join(', ');
    const counts = c.type === 'view' ? [plural(c.fields.length, 'field')] : [plural(c.fields.length, 'field'), plural(c.records, 'record'), plural(c.files, 'file'), plural(c.indexes, 'index', 'indexes')];
    lines.push(`  ${c.name} (${what}): ${counts.join(', ')}`);
    if (c.fields.length > 0) lines.push(`    fields: ${c.fields.join(', ')}`);
  }
  lines.push('');
  lines.push(`Administrators ${verb}: ${r.administrators.carried}`);
  lines.push(`OAuth2 links ${verb}: ${r.oauth2Links.carried}${r.oauth2Links.skipped > 0 ? ` (${r.oauth2Links.skipped} of records not carried left behind)` : ''}`);
  if (r.migrations > 0) lines.push(`pb_migrations history ${verb}: ${r.migrations} applied files (they do not run again)`);
  lines.push(`Sign-in origins ${verb}: ${r.authOrigins.carried}${r.authOrigins.skipped > 0 ? ` (${r.authOrigins.skipped} of accounts not carried, or already there, left behind)` : ''}`);
  lines.push(`Settings ${verb}: ${r.settings.length > 0 ? r.settings.join(', ') : 'none'}`);
  const notes = [...r.administrators.skipped, ...r.notCarried];
  const groups: Array<[string, Note[]]> = [
    ['Renamed', notes.filter((n) => n.kind === 'renamed')],
    ['Carried changed', notes.filter((n) => n.kind === 'changed')],
    ['Not carried', notes.filter((n) => n.kind === 'not-carried')],
    ['Notes', notes.filter((n) => n.kind === undefined)],
  ];
  if (!notes.some((n) => n.kind === 'not-carried')) {
    lines.push('');
    lines.push('Nothing was left behind.');
  }
  for (const [title, group] of groups) {
    if (group.length === 0) continue;
    lines.push('');
    lines.push(`${title}:`);
    for (const n of group) lines.push(`  - ${n.what}: ${n.why}`);
  }
  if (r.ms !== undefined) {
    const records = r.collections.reduce((s, c) => s + c.records, 0);
    lines.push('');
    const rate = r.recordsMs ? `, copied at ${Math.round(records / (r.recordsMs / 1000)).toLocaleString('en-US')} records/s` : '';
    lines.push(`Done in ${(r.ms / 1000).toFixed(2)} s (${plural(records, 'record')}${rate}).`);
  }
  return lines.join('\n');
}
