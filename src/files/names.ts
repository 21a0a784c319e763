import { randomId } from '../lib/ids.ts';

/**
 * Names of stored files. A stored name is the client's name made safe and suffixed with a random
 * part, as PocketBase does (`my photo.PNG` → `my_photo_k3v9x0qz2m.png`): unique within its record,
 * unguessable, and free of anything a path or a header could misread.
 */

const RANDOM_PART = 10;
const MAX_BASE = 100;
const MAX_EXTENSION = 20;
/** What a stored name may look like: Cairn's own names, and PocketBase's (mixed-case random part). */
const STORED_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/;

/** Whether `name` can be a stored file name: one path segment, no `..`, no hidden-file dot. */
export function isStoredName(name: unknown): name is string {
  return typeof name === 'string' && STORED_NAME.test(name) && !name.includes('..');
}

/** The extension (without dot), lower case, letters and digits only; `tar.gz`-style pairs are kept. */
function extensionOf(name: string): string {
  const m = /\.([^./\\]+)$/.exec(name);
  if (!m) return '';
  const ext = m[1].toLowerCase().replace(/[^a-z0-9]/g, '').slice(-MAX_EXTENSION);
  const before = name.slice(0, m.index);
  return /\.tar$/i.test(before) && ext !== '' ? `tar.${ext}` : ext;
}

/** `Über Café.jpeg` → `uber_cafe`: ASCII snake case of the name without its extension. */
function baseOf(name: string, ext: string): string {
  let base = ext === '' ? name : name.slice(0, name.length - ext.length - 1);
  base = base
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (base.length < 3) base += randomId(RANDOM_PART);
  return base.slice(0, MAX_BASE);
}

/**
 * The stored name for an upload called `clientName` (path parts a browser may send are dropped).
 * `fallbackExtension` names the extension when the client's name has none (from the content type).
 */
export function storedName(clientName: string, fallbackExtension = ''): string {
  const last = clientName.split(/[/\\]/).pop() ?? '';
  const ext = extensionOf(last) || fallbackExtension.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, MAX_EXTENSION);
  return `${baseOf(last, extensionOf(last))}_${randomId(RANDOM_PART)}${ext ? `.${ext}` : ''}`;
}
