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
  notCarried: Note[];
  /** Wall time of the import in milliseconds (not set for a dry run). */
  ms?: number;
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
    const what = [c.type, c.merged ? "merged into Cairn's users" : ''].filter(Boolean).join(', ');
    const counts = c.type === 'view' ? [plural(c.fields.length, 'field')] : [plural(c.fields.length, 'field'), plural(c.records, 'record'), plural(c.files, 'file'), plural(c.indexes, 'index', 'indexes')];
    lines.push(`  ${c.name} (${what}): ${counts.join(', ')}`);
    if (c.fields.length > 0) lines.push(`    fields: ${c.fields.join(', ')}`);
  }
  lines.push('');
  lines.push(`Administrators ${verb}: ${r.administrators.carried}`);
  lines.push(`OAuth2 links ${verb}: ${r.oauth2Links.carried}${r.oauth2Links.skipped > 0 ? ` (${r.oauth2Links.skipped} of records not carried left behind)` : ''}`);
  const notes = [...r.administrators.skipped, ...r.notCarried];
  lines.push('');
  if (notes.length === 0) lines.push('Everything was carried.');
  else {
    lines.push('Not carried, or carried changed:');
    for (const n of notes) lines.push(`  - ${n.what}: ${n.why}`);
  }
  if (r.ms !== undefined) {
    const records = r.collections.reduce((s, c) => s + c.records, 0);
    lines.push('');
    lines.push(`Done in ${(r.ms / 1000).toFixed(2)} s (${plural(records, 'record')}).`);
  }
  return lines.join('\n');
}
