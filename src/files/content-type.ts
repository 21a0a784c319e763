import type { Readable } from 'node:stream';

/**
 * The content type of a file, decided on its bytes: a binary signature (file-type) wins over the name,
 * so a PNG called `notes.txt` is `image/png` and a script called `photo.png` is text, never an image.
 * Text formats carry no signature; for content that is text, the name's extension picks among them.
 */

/** How many leading bytes the text check looks at. */
export const SNIFF_BYTES = 4096;

const TEXT_TYPES: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  log: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  xml: 'application/xml',
  svg: 'image/svg+xml',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  ics: 'text/calendar',
  vcf: 'text/vcard',
};

/** Types a browser may show in place; everything else is served as an attachment (PocketBase's list). */
const INLINE_TYPES = new Set([
  'image/png',
  'image/jpg',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/x-icon',
  'image/bmp',
  'image/avif',
  'video/webm',
  'video/mp4',
  'video/quicktime',
  'audio/mpeg',
  'audio/wav',
  'audio/x-wav',
  'audio/aac',
  'audio/ogg',
  'audio/x-m4a',
  'application/pdf',
]);

export function isInlineType(contentType: string): boolean {
  return INLINE_TYPES.has(contentType);
}

/** Text: no NUL byte and valid UTF-8 (a sequence cut at the end of the sample is fine). */
export function looksLikeText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

function extensionOf(name: string): string {
  const m = /\.([A-Za-z0-9]+)$/.exec(name);
  return m ? m[1].toLowerCase() : '';
}

function decide(found: { mime: string } | undefined, head: Uint8Array, name: string): string {
  const ext = extensionOf(name);
  if (found) {
    // An SVG that starts with an XML declaration is still an SVG.
    if (found.mime === 'application/xml' && ext === 'svg') return TEXT_TYPES.svg;
    return found.mime;
  }
  if (looksLikeText(head)) return TEXT_TYPES[ext] ?? 'text/plain';
  return 'application/octet-stream';
}

export interface Detected {
  contentType: string;
  /** The usual extension of a recognised binary format (for names that have none). */
  extension?: string;
}

/** Content type of a local file; `head` holds its first bytes (up to SNIFF_BYTES). */
export async function detectFileType(filePath: string, head: Uint8Array, name: string): Promise<Detected> {
  // file-type and its readers (some 5 MB resident) load with the first upload.
  const { fileTypeFromFile } = await import('file-type');
  const found = await fileTypeFromFile(filePath);
  const contentType = decide(found, head, name);
  return { contentType, extension: found?.ext ?? (contentType === 'text/plain' ? 'txt' : undefined) };
}

/** Content type of stored content, read through `open` (twice at most: the signature, then a text sample). */
export async function detectStoredType(open: (end?: number) => Promise<Readable>, name: string): Promise<string> {
  const whole = await open();
  let found: { mime: string } | undefined;
  try {
    const { fileTypeFromStream } = await import('file-type');
    found = await fileTypeFromStream(whole);
  } finally {
    // file-type stops reading once it has decided; the rest of the stream is not needed.
    whole.destroy();
  }
  if (found) return decide(found, new Uint8Array(), name);
  const chunks: Buffer[] = [];
  for await (const chunk of await open(SNIFF_BYTES - 1)) chunks.push(chunk as Buffer);
  return decide(undefined, Buffer.concat(chunks), name);
}
