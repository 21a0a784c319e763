/**
 * What a migration changes outside its database — the administrators (PocketBase's superusers, which
 * migrations create: `dao.saveAdmin`, a `_superusers` record) and the instance's settings — kept until
 * the file has run to its end, so that a file that fails leaves them as they were.
 */
import type { AdminService } from '../auth/admins.ts';
import { superuserJson } from '../auth/superusers.ts';
import { SUPERUSERS_COLLECTION } from '../collections/superusers.ts';
import { badRequest, isApiError } from '../errors.ts';
import { NotFoundError } from '../hooks/errors.ts';
import type { SettingsService } from '../settings/service.ts';
import { isPlainObject } from '../lib/objects.ts';

/** Superusers saved or deleted by a file, by email (null: deleted). */
export class PendingSuperusers {
  private readonly byEmail = new Map<string, { email: string; password?: string } | null>();

  constructor(private readonly admins: AdminService | undefined) {}

  /** A superuser by email: one the file saved, else a stored one. */
  async find(email: string): Promise<Record<string, unknown>> {
    const key = email.toLowerCase();
    if (this.byEmail.has(key)) {
      const pending = this.byEmail.get(key);
      if (pending) return { id: '', email: pending.email, collectionId: SUPERUSERS_COLLECTION.id, collectionName: SUPERUSERS_COLLECTION.name };
    } else {
      const row = await this.admins?.findByEmail(email);
      if (row) return superuserJson(row);
    }
    throw new NotFoundError(`No superuser "${email}".`);
  }

  /** The email of a stored superuser by id (a record a file found and then changes or deletes). */
  async emailOf(id: string): Promise<string> {
    const row = await this.admins?.get(id).catch(() => undefined);
    if (!row) throw new NotFoundError(`No superuser "${id}".`);
    return row.email;
  }

  save(data: unknown): Record<string, unknown> {
    const d = (isPlainObject(data) ? data : {}) as { email?: unknown; password?: unknown };
    if (typeof d.email !== 'string' || d.email === '') throw badRequest('Failed to create record.', { email: { code: 'validation_required', message: 'Cannot be blank.' } });
    this.byEmail.set(d.email.toLowerCase(), { email: d.email, password: typeof d.password === 'string' && d.password !== '' ? d.password : undefined });
    return { id: '', email: d.email, collectionId: SUPERUSERS_COLLECTION.id, collectionName: SUPERUSERS_COLLECTION.name };
  }

  delete(email: string): void {
    this.byEmail.set(email.toLowerCase(), null);
  }

  /** Creates, changes (a password given) and deletes what the file asked for. */
  async write(): Promise<void> {
    for (const [email, pending] of this.byEmail) {
      const admins = this.admins;
      if (!admins) throw new Error('superusers cannot be saved from pb_migrations here');
      const row = await admins.findByEmail(email);
      if (pending === null) {
        if (row) await admins.delete(row.id);
      } else if (row) {
        if (pending.password) await admins.update(row.id, { password: pending.password, passwordConfirm: pending.password });
      } else await admins.create({ email: pending.email, password: pending.password, passwordConfirm: pending.password });
    }
  }
}

/** The settings as a file saved them last. */
export class PendingSettings {
  private settings: Record<string, unknown> | undefined;
  private checked = true;

  constructor(private readonly service: SettingsService) {}

  async view(): Promise<Record<string, unknown>> {
    return this.settings ?? (await this.service.view());
  }

  /** `checked` false: v0.22's `dao.saveSettings`, which writes the settings as they are (its forms check them). */
  save(settings: unknown, checked: boolean): Record<string, unknown> {
    if (!isPlainObject(settings)) throw badRequest('The settings are an object.');
    this.settings = settings;
    this.checked = checked;
    return settings;
  }

  /** Saves the sections that changed, of those this instance has (a PocketBase settings object carries others, e.g. `batch`). */
  async write(): Promise<void> {
    if (!this.settings) return;
    const known = await this.service.view();
    const changed = Object.fromEntries(Object.entries(this.settings).filter(([k, v]) => k in known && JSON.stringify(v) !== JSON.stringify(known[k])));
    if (Object.keys(changed).length === 0) return;
    if (this.checked) {
      await this.service.patch(changed);
      return;
    }
    // Unvalidated (v0.22's dao): Cairn's settings are always valid, so a value it refuses (a blank
    // `meta.appName`, an `appUrl` without its scheme) stays as it was and the rest is saved.
    for (const [section, value] of Object.entries(changed)) {
      try {
        await this.service.patch({ [section]: value });
      } catch (err) {
        const refused = isApiError(err) && isPlainObject(err.data) && isPlainObject(err.data[section]) ? Object.keys(err.data[section]) : [];
        if (!isPlainObject(value) || refused.length === 0) continue;
        const rest = Object.fromEntries(Object.entries(value).filter(([k]) => !refused.includes(k)));
        await this.service.patch({ [section]: rest }).catch(() => undefined);
      }
    }
  }
}
