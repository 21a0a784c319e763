import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** A multipart body: plain values as fields, `{ name, data }` as files. */
export function form(entries: Array<[string, string | { name: string; data: Buffer | string }]>): FormData {
  const fd = new FormData();
  for (const [key, value] of entries) {
    if (typeof value === 'string') fd.append(key, value);
    else fd.append(key, new Blob([value.data as BlobPart]), value.name);
  }
  return fd;
}

/** Every file under a directory, as paths relative to it. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.relative(dir, path.join(entry.parentPath, entry.name)));
  }
  return out.sort();
}
