import { defineHooks, type RecordEvent } from 'cairn';
import { slugify } from './lib/slug.ts';

/**
 * Every product gets a unique slug from its name, on create and again when it is renamed. The hooks
 * run before the write's validation, so the schema can require `slug` (a product written while
 * these hooks are not loaded is refused rather than stored without one).
 */
export default defineHooks((app) => {
  app.onRecordCreate(async (e) => {
    e.record.slug = await uniqueSlug(e, String(e.record.name ?? ''));
    await e.next();
  }, 'products');

  app.onRecordUpdate(async (e) => {
    if (e.record.name !== e.original?.name || !e.record.slug) e.record.slug = await uniqueSlug(e, String(e.record.name ?? ''));
    await e.next();
  }, 'products');
});

/** The name's slug, with `-2`, `-3`… appended while another product holds it. */
async function uniqueSlug(e: RecordEvent, name: string): Promise<string> {
  // Bound to the write's transaction: sees products written earlier in the same batch.
  const records = e.app.records(e.db);
  const base = slugify(name);
  for (let n = 1; ; n++) {
    const slug = n === 1 ? base : `${base}-${n}`;
    // {:name} placeholders are bound as values, never read as filter syntax.
    const taken = await records.count('products', 'slug = {:slug} && id != {:id}', { slug, id: e.record.id });
    if (taken === 0) return slug;
  }
}
