import { ApiError, badRequest, type FieldError } from '../errors.ts';
import { nowIso } from '../lib/time.ts';
import type { Invalidations } from '../storage/invalidations.ts';
import type { Database, Queryable, SchemaStep, Transaction, TransactionLock } from '../storage/index.ts';
import type { SettingsSection } from './section.ts';
import { nestErrors } from './shape.ts';

// The section's type lives below both this service and shape.ts (which builds sections), so neither
// imports the other; importers of the service keep finding it here.
export type { SettingsSection } from './section.ts';

/** Instance settings (system.db), one JSON document per section. */
export const settingsTableStep: SchemaStep = {
  id: 'system.settings',
  async up(tx) {
    await tx.exec('CREATE TABLE _settings (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL, updated TEXT NOT NULL)');
  },
};

/** `GET/PATCH /api/settings`: the sections' values, cached in memory and written through. */
export class SettingsService {
  private readonly sections = new Map<string, SettingsSection>();
  private cache?: Promise<Map<string, unknown>>;
  /** The values last loaded, for code that cannot wait (a request's own hooks); see `peek`. */
  private snapshot?: Map<string, unknown>;

  constructor(
    private readonly system: Database,
    sections: SettingsSection<any>[],
    private readonly invalidations?: Invalidations,
    private readonly lock?: TransactionLock,
  ) {
    for (const s of sections) this.sections.set(s.name, s);
    // Another node changed them: read again, now, so that `peek` sees the change without a request
    // having to wait for it first (and before this node acknowledges the change).
    invalidations?.on('settings', () => {
      this.cache = undefined;
      if (this.snapshot) return this.load().then(() => this.changed(), () => undefined);
    });
  }

  private readonly listeners: Array<() => void> = [];

  /**
   * Calls `listener` whenever the sections may have changed: saved on this node (once stored) or on
   * another (once read back). For what is set up from the settings rather than read on each use (a
   * schedule); `peekSaved` then gives the new values.
   */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }

  /**
   * A section's value as last loaded, without waiting: for what runs on every request synchronously
   * (the request log, rate limits, the client's address). Undefined until loaded once (`get` loads);
   * a change saved on any node shows here as soon as it is read back.
   */
  peek<T>(name: string): T | undefined {
    if (!this.cache) void this.load().catch(() => undefined);
    return this.snapshot?.get(name) as T | undefined;
  }

  /** As `peek`, but only a section that has been saved: until then the environment decides. */
  peekSaved<T>(name: string): T | undefined {
    const value = this.peek<T>(name);
    return this.saved.has(name) ? value : undefined;
  }

  /** Sections stored in the database (not only shown from their defaults). */
  private saved = new Set<string>();

  private load(): Promise<Map<string, unknown>> {
    this.cache ??= this.read(this.system).then(({ values, saved }) => {
      this.saved = saved;
      this.snapshot = values;
      return values;
    });
    this.cache.catch(() => (this.cache = undefined));
    return this.cache;
  }

  /** Every section's stored value (else its defaults), and which are stored. */
  private async read(db: Queryable): Promise<{ values: Map<string, unknown>; saved: Set<string> }> {
    const rows = await db.all<{ name: string; value: string }>('SELECT name, value FROM _settings');
    const values = new Map<string, unknown>();
    for (const [name, section] of this.sections) values.set(name, section.defaults());
    for (const row of rows) if (this.sections.has(row.name)) values.set(row.name, JSON.parse(row.value));
    return { values, saved: new Set(rows.map((r) => r.name)) };
  }

  /** The stored value of a section, secrets included (for the domain that owns it). */
  async get<T>(name: string): Promise<T> {
    return (await this.load()).get(name) as T;
  }

  /** Every section as an administrator may see it. */
  async view(): Promise<Record<string, unknown>> {
    const values = await this.load();
    const out: Record<string, unknown> = {};
    for (const [name, section] of this.sections) out[name] = section.view(values.get(name));
    return out;
  }

  /**
   * Merges sections of `values` over the stored ones as `patch` merges them (a known section is
   * validated by its owner; one this instance has no owner for is kept as it is) and stores the valid
   * ones, in a transaction of the caller's on the system database (an import): under the lock a PATCH
   * takes, reading what the PATCHes before it stored. `forget` once it has committed.
   */
  async mergeInto(tx: Transaction, values: ReadonlyMap<string, unknown>): Promise<{ stored: string[]; errors: Map<string, Record<string, FieldError>> }> {
    await this.lock?.(tx, 'cairn.settings');
    const stored = (await this.read(tx)).values;
    const out = new Map<string, unknown>();
    const errors = new Map<string, Record<string, FieldError>>();
    for (const [name, input] of values) {
      const section = this.sections.get(name);
      if (!section) {
        out.set(name, input);
        continue;
      }
      const problems: Record<string, FieldError> = {};
      const merged = section.merge(input, stored.get(name), problems);
      if (Object.keys(problems).length > 0) errors.set(name, problems);
      else out.set(name, merged);
    }
    await storeSettings(tx, out);
    return { stored: [...out.keys()], errors };
  }

  /** Drops the cached values, here and on the other nodes (after `storeSettings` committed). */
  async forget(): Promise<void> {
    this.cache = undefined;
    void this.load().then(() => this.changed(), () => undefined);
    await this.invalidations?.publish('settings');
  }

  /**
   * Applies the sections present in `body`; nothing is saved unless every section is valid. The
   * sections are read inside the write transaction, never from the cache: PATCHes sent at once then
   * each merge over what the ones before them stored, as if sent one after the other. SQLite runs
   * write transactions one at a time already; PostgreSQL needs the lock, which stands for the whole
   * document because a section never saved has no row to lock.
   */
  async patch(body: unknown): Promise<Record<string, unknown>> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
    await this.system.transaction(async (tx) => {
      await this.lock?.(tx, 'cairn.settings');
      const { values } = await this.read(tx);
      const errors: Record<string, FieldError> = {};
      const changed = new Map<string, unknown>();
      for (const [name, input] of Object.entries(body)) {
        const section = this.sections.get(name);
        if (!section) {
          errors[name] = { code: 'validation_unknown_setting', message: `Unknown settings section; known: ${[...this.sections.keys()].join(', ')}.` };
          continue;
        }
        changed.set(name, section.merge(input, values.get(name), errors));
      }
      // Nested per section (`{meta: {appName: …}}`), as PocketBase answers them.
      if (Object.keys(errors).length > 0) throw new ApiError(400, 'Failed to save the settings.', nestErrors(errors));
      await storeSettings(tx, changed);
    });
    await this.forget();
    return this.view();
  }
}

/** Writes sections of the settings document in a transaction the caller owns. */
export async function storeSettings(tx: Queryable, values: ReadonlyMap<string, unknown>): Promise<void> {
  const now = nowIso();
  for (const [name, value] of values) {
    await tx.run('INSERT INTO _settings (name, value, updated) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value, updated = excluded.updated', [
      name,
      JSON.stringify(value),
      now,
    ]);
  }
}

/** Reads an object section input, or records why it is not one. */
export function objectInput(input: unknown, path: string, errors: Record<string, FieldError>): Record<string, unknown> | undefined {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return input as Record<string, unknown>;
  errors[path] = { code: 'validation_invalid_object', message: 'Must be an object.' };
  return undefined;
}

/** An absolute http(s) URL, or undefined. */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
}
