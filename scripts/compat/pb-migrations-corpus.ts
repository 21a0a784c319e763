/**
 * Applies real apps' pb_migrations folders to a fresh Cairn and compares the schema they leave with
 * PocketBase's for the same app (API contract §24). Not run by CI: the corpus is public material
 * gathered at the time, read from the path given, never committed.
 *
 *   node --import tsx scripts/compat/pb-migrations-corpus.ts CORPUS_DIR [--pg postgres://…/postgres] [--only NAME] [--json FILE]
 *
 * CORPUS_DIR holds one folder per app: `pb_migrations/` (the app's files as committed), `meta.json`
 * (`{repo, commit, migrations, reference}`) and, when the app has one, its reference for the schema
 * PocketBase produces: `reference.schema.json` (a committed `pb_schema.json`, either shape),
 * `reference.types.ts` (its generated `pocketbase-types.ts`) or `reference.snapshot.js` (a snapshot
 * migration of the same folder). The fair reference is PocketBase itself run on the same folder:
 * `reference.pocketbase.json` (`{pocketbase, applied, error?, collections: [{name, type, fields:
 * [{name, type}]}]}`, what `pocketbase migrate up` left in `_collections`); when it is there it wins
 * over the others, field types are compared too, and an app PocketBase does not apply is reported
 * as such and counted apart (Cairn should stop on it as well). Each app runs on SQLite, and with
 * `--pg` on PostgreSQL too (a database of its own, dropped afterwards). The table goes to stdout,
 * one line per app and engine: whether every file applied (else the file, line and reason), and the
 * collections and fields that differ from the reference.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import pg from 'pg';
import { collectionsFromExport } from '../../src/collections/pocketbase-shapes.ts';
import { loadConfig } from '../../src/config.ts';
import { Host } from '../../src/http/host.ts';

/** Each collection's field names; with PocketBase's own run as the reference, each name's type too. */
type Schema = Map<string, Set<string>>;
type Types = Map<string, Map<string, string>>;

/** Field names every collection (or every auth collection) has, left out of the comparison. */
const SYSTEM_FIELDS = new Set(['id', 'created', 'updated', 'collectionId', 'collectionName', 'expand', 'email', 'emailVisibility', 'verified', 'password', 'tokenKey', 'username']);

type Listed = ReadonlyArray<{ name: string; fields: ReadonlyArray<{ name: string; type?: string }> }>;

function schemaOf(list: Listed): Schema {
  const out: Schema = new Map();
  for (const c of list) {
    if (c.name.startsWith('_')) continue;
    out.set(c.name, new Set(c.fields.map((f) => f.name).filter((n) => !SYSTEM_FIELDS.has(n))));
  }
  return out;
}

function typesOf(list: Listed): Types {
  const out: Types = new Map();
  for (const c of list) out.set(c.name, new Map(c.fields.map((f) => [f.name, f.type ?? ''])));
  return out;
}

/** The collections a snapshot migration imports: the file run with `importCollections` caught. */
function snapshotSchema(source: string): Schema {
  let caught: unknown;
  const importer = { importCollections: (list: unknown) => (caught = list) };
  const context = vm.createContext({
    migrate: (up: (arg: unknown) => unknown) => up(importer),
    Dao: function Dao() {
      return importer;
    },
    Collection: function Collection(this: Record<string, unknown>, data: Record<string, unknown>) {
      Object.assign(this, data);
    },
  });
  vm.runInContext(source, context);
  return schemaOf(collectionsFromExport(JSON.parse(JSON.stringify(caught))));
}

/** The collections and fields of a generated `pocketbase-types.ts`: its `Collections` enum and `…Record` types. */
function typesSchema(source: string): Schema {
  const out: Schema = new Map();
  // pocketbase-typegen writes `export enum Collections {A = "a"}`, its newer releases `export const Collections = {A: "a"} as const`.
  const enumBody = /export (?:enum Collections|const Collections\s*=)\s*\{([\s\S]*?)\}/.exec(source)?.[1] ?? '';
  for (const m of enumBody.matchAll(/(\w+)\s*[=:]\s*["']([^"']+)["']/g)) {
    const [, key, name] = m;
    if (name.startsWith('_')) continue;
    const body = new RegExp(`export type ${key}Record(?:<[^>]*>)?\\s*=\\s*(?:[\\w<>]+\\s*&\\s*)?\\{([\\s\\S]*?)\\n\\}`).exec(source)?.[1] ?? '';
    const fields = [...body.matchAll(/^\s*["']?([\w$]+)["']?\??\s*:/gm)].map((f) => f[1]).filter((n) => !SYSTEM_FIELDS.has(n));
    out.set(name, new Set(fields));
  }
  // Other generators (pocketbase-zod-schema) write no enum: each `…Record` interface names its collection.
  if (out.size === 0) {
    for (const m of source.matchAll(/export interface \w+Record\s*\{([\s\S]*?)\n\}(?!;)/g)) {
      const name = /^\s*collectionName:\s*["']([^"']+)["']/m.exec(m[1])?.[1];
      if (!name || name.startsWith('_')) continue;
      // Top-level keys only: those of a nested object type are inside its braces.
      const fields: string[] = [];
      let depth = 0;
      for (const line of m[1].split('\n')) {
        const key = depth === 0 ? /^\s*["']?([\w$]+)["']?\??\s*:/.exec(line)?.[1] : undefined;
        if (key && !SYSTEM_FIELDS.has(key)) fields.push(key);
        depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
      }
      out.set(name, new Set(fields));
    }
  }
  return out;
}

interface Reference {
  kind: string;
  schema: Schema;
  types?: Types;
  /** With PocketBase's own run: whether it applied every file, else its error. */
  pocketbase?: { version: string; applied: boolean; error?: string };
}

function referenceOf(app: string): Reference | undefined {
  const own = path.join(app, 'reference.pocketbase.json');
  if (existsSync(own)) {
    const run = JSON.parse(readFileSync(own, 'utf8')) as { pocketbase: string; applied: boolean; error?: string; collections?: Listed };
    // v0.22 keeps nothing of a `migrate up` that fails, not even its own tables.
    run.collections ??= [];
    return {
      kind: `PocketBase ${run.pocketbase}`,
      schema: schemaOf(run.collections),
      types: typesOf(run.collections),
      pocketbase: { version: run.pocketbase, applied: run.applied, error: run.error },
    };
  }
  for (const file of readdirSync(app).filter((f) => f.startsWith('reference.'))) {
    const text = readFileSync(path.join(app, file), 'utf8');
    if (file.includes('.snapshot.')) return { kind: 'snapshot', schema: snapshotSchema(text) };
    if (file.includes('.schema.')) return { kind: 'pb_schema.json', schema: schemaOf(collectionsFromExport(JSON.parse(text))) };
    if (file.includes('.types.')) return { kind: 'pocketbase-types.ts', schema: typesSchema(text) };
  }
  return undefined;
}

function diff(reference: Reference, actual: Schema, actualTypes: Types): string[] {
  const out: string[] = [];
  for (const [name, fields] of reference.schema) {
    const have = actual.get(name);
    if (!have) {
      out.push(`missing collection ${name}`);
      continue;
    }
    const missing = [...fields].filter((f) => !have.has(f));
    // Cairn's default `users` has the specification's `role` beside PocketBase's fields (docs/pocketbase.md).
    const extra = [...have].filter((f) => !fields.has(f) && !(name === 'users' && f === 'role'));
    if (missing.length > 0) out.push(`${name}: missing ${missing.join(', ')}`);
    if (extra.length > 0) out.push(`${name}: extra ${extra.join(', ')}`);
    const types = reference.types?.get(name);
    if (types) {
      // `users.role` is Cairn's own (a file that adds its own `role` only when absent keeps Cairn's).
      const changed = [...fields].filter((f) => have.has(f) && types.get(f) !== actualTypes.get(name)?.get(f) && !(name === 'users' && f === 'role'));
      if (changed.length > 0) out.push(`${name}: type of ${changed.map((f) => `${f} ${actualTypes.get(name)?.get(f)} (PocketBase: ${types.get(f)})`).join(', ')}`);
    }
  }
  const schema = reference.schema;
  // `users` exists on every instance; another collection the reference does not list is extra.
  for (const name of actual.keys()) if (!schema.has(name) && name !== 'users') out.push(`extra collection ${name}`);
  return out;
}

interface Outcome {
  app: string;
  engine: 'sqlite' | 'postgres';
  files: number;
  applied: boolean;
  error?: string;
  reference?: string;
  /** Whether PocketBase itself applied the folder, when its run is the reference. */
  pocketbase?: { version: string; applied: boolean; error?: string };
  differences?: string[];
}

async function runOne(app: string, engine: 'sqlite' | 'postgres', pgServer: string | undefined): Promise<Outcome> {
  const name = path.basename(app);
  const files = readdirSync(path.join(app, 'pb_migrations')).filter((f) => /\.(js|ts)$/.test(f)).length;
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-pbcorpus-'));
  let database: string | undefined;
  const env: Record<string, string> = { CAIRN_LOG_LEVEL: 'silent', CAIRN_RATE_LIMIT: 'off', CAIRN_HOOKS_DIR: 'off', CAIRN_PB_HOOKS_DIR: 'off', CAIRN_PUBLIC_DIR: 'off', CAIRN_PB_MIGRATIONS_DIR: path.join(app, 'pb_migrations'), CAIRN_DRAIN_MS: '0' };
  if (engine === 'postgres') {
    database = `cairn_pbcorpus_${name.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 40)}`;
    const admin = new pg.Client({ connectionString: pgServer });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${database}"`);
    await admin.end();
    const url = new URL(pgServer!);
    url.pathname = `/${database}`;
    env.CAIRN_DATABASE_URL = url.toString();
  }
  const reference = referenceOf(app);
  const outcome: Outcome = { app: name, engine, files, applied: false, reference: reference && `${reference.kind} (${reference.schema.size} collections)`, pocketbase: reference?.pocketbase };
  try {
    const host = await Host.start(loadConfig({ dir, port: 0, host: '127.0.0.1' }, env));
    try {
      outcome.applied = true;
      // What PocketBase left after a failing folder is not a schema to compare with (it keeps nothing of the run).
      if (reference && reference.pocketbase?.applied !== false) {
        const main = await host.services.registry.get('main');
        const list = (await host.services.collections.all(main)).list;
        outcome.differences = diff(reference, schemaOf(list), typesOf(list));
      }
    } finally {
      await host.close(undefined, 0);
    }
  } catch (err) {
    outcome.error = (err instanceof Error ? err.message : String(err)).replace(app, '').split('\n')[0];
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (database) {
      const admin = new pg.Client({ connectionString: pgServer });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
    }
  }
  return outcome;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const corpus = args[0];
  if (!corpus || !existsSync(corpus)) throw new Error('usage: pb-migrations-corpus.ts CORPUS_DIR [--pg URL] [--only NAME] [--json FILE]');
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const pgServer = flag('--pg');
  const only = flag('--only');
  const apps = readdirSync(corpus)
    .filter((d) => existsSync(path.join(corpus, d, 'pb_migrations')) && (!only || d.includes(only)))
    .sort()
    .map((d) => path.resolve(corpus, d));
  const outcomes: Outcome[] = [];
  console.log('| app | engine | files | PocketBase | applied | reference | same schema | differences or error |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const app of apps) {
    for (const engine of pgServer ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const)) {
      const o = await runOne(app, engine, pgServer);
      outcomes.push(o);
      const same = o.differences === undefined ? '—' : o.differences.length === 0 ? 'yes' : 'no';
      const pb = o.pocketbase ? (o.pocketbase.applied ? 'applies' : `stops: ${o.pocketbase.error ?? ''}`.slice(0, 160)) : '—';
      const cell = (text: string) => text.replace(/\|/g, '\\|');
      console.log(`| ${o.app} | ${o.engine} | ${o.files} | ${cell(pb)} | ${o.applied ? 'yes' : 'no'} | ${o.reference ?? 'none'} | ${same} | ${cell(o.error ?? o.differences?.join('; ') ?? '').slice(0, 300)} |`);
    }
  }
  const applied = outcomes.filter((o) => o.applied).length;
  const same = outcomes.filter((o) => o.differences?.length === 0).length;
  console.log(`\n${applied} of ${outcomes.length} runs applied every file; ${same} of the runs a reference (${outcomes.filter((o) => o.reference).length}) left the same schema.`);
  for (const engine of ['sqlite', 'postgres'] as const) {
    const runs = outcomes.filter((o) => o.engine === engine && o.pocketbase);
    if (runs.length === 0) continue;
    const fair = runs.filter((o) => o.pocketbase!.applied);
    const refused = runs.filter((o) => !o.pocketbase!.applied);
    console.log(
      `${engine}: of ${fair.length} apps PocketBase applies, ${fair.filter((o) => o.applied).length} apply on Cairn and ${fair.filter((o) => o.differences?.length === 0).length} leave the same schema; ` +
        `of ${refused.length} PocketBase stops on, Cairn stops on ${refused.filter((o) => !o.applied).length}.`,
    );
  }
  const json = flag('--json');
  if (json) writeFileSync(json, JSON.stringify(outcomes, null, 2));
}

await main();
