import { writeFile, unlink } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { randomId } from '../lib/ids.ts';
import type { FileStorage, StoredFileInfo } from './storage/types.ts';

/**
 * Thumbnails of images, as PocketBase makes them: `?thumb=` names a size, and when the size is one
 * the file field lists (or `100x100`, which PocketBase's dashboard asks for) and the file is a PNG,
 * JPEG, GIF or WebP image, the thumbnail is made on the first request, stored beside the original
 * (`<record folder>/thumbs_<file>/<size>_<file>`, so a record's delete takes it too) and served from
 * then on. Anything else, or a thumbnail that cannot be made (a broken image, one too large), serves
 * the original. Sizes:
 *
 * - `WxH`: resized to cover W×H and cropped to it from the centre; `WxHt` and `WxHb` crop from the
 *   top or the bottom;
 * - `WxHf`: resized to fit inside W×H, never enlarged;
 * - `Wx0` and `0xH`: resized to that width or height, the other side keeping the proportions.
 *
 * The image is turned as its EXIF orientation says and stripped of its metadata (a photo's location
 * does not reach a thumbnail). A JPEG gives a JPEG, a GIF a GIF of its first frame, a PNG or a WebP a
 * PNG (as PocketBase). The image library (sharp, libvips) is loaded on the first thumbnail.
 */

export const THUMB_SIZE = /^(\d+)x(\d+)(t|b|f)?$/;
/** Served whatever the field lists: the size PocketBase's dashboard asks for. */
const DEFAULT_SIZES: readonly string[] = ['100x100'];
const IMAGE_TYPES = new Set(['image/png', 'image/jpg', 'image/jpeg', 'image/gif', 'image/webp']);
/**
 * Bounds on what one thumbnail may cost. An image's pixels are decoded in memory (4 bytes each), so
 * an upload of a few megabytes declaring 20,000 × 20,000 pixels would take gigabytes: 50 megapixels
 * covers a 48-megapixel phone's photos. A thumbnail larger than 4,096 pixels a side is no thumbnail.
 */
const MAX_INPUT_PIXELS = 50_000_000;
const MAX_INPUT_BYTES = 64 * 1024 * 1024;
const MAX_SIDE = 4096;
/**
 * Thumbnails made at once: each holds one of libuv's four pool threads, which file reads and password
 * hashing use too. Past a wait of WAIT_MS for a slot, the original is served.
 */
const SLOTS = Math.max(1, Math.min(2, availableParallelism()));
const WAIT_MS = 30_000;

export interface Thumbnail {
  key: string;
  /** The name it is served under: `<size>_<file>`, as PocketBase. */
  name: string;
  contentType: string;
  /** The stored thumbnail's size and time. */
  info: StoredFileInfo;
}

interface Size {
  width: number;
  height: number;
  crop: 'centre' | 'top' | 'bottom' | 'fit';
}

function parseSize(text: string): Size | undefined {
  const m = THUMB_SIZE.exec(text);
  if (!m) return undefined;
  const width = Number(m[1]);
  const height = Number(m[2]);
  if ((width === 0 && height === 0) || width > MAX_SIDE || height > MAX_SIDE) return undefined;
  const crop = m[3] === 'f' ? 'fit' : m[3] === 't' ? 'top' : m[3] === 'b' ? 'bottom' : 'centre';
  return { width, height, crop };
}

/** What a thumbnail of an image of `type` is encoded as. */
function outputType(type: string): 'image/jpeg' | 'image/gif' | 'image/png' {
  return type === 'image/jpeg' || type === 'image/jpg' ? 'image/jpeg' : type === 'image/gif' ? 'image/gif' : 'image/png';
}

type Sharp = (typeof import('sharp'))['default'];
let library: Promise<Sharp> | undefined;

function sharpLibrary(): Promise<Sharp> {
  library ??= import('sharp').then(({ default: sharp }) => {
    // Each thumbnail is made once and stored: libvips's cache of operations would only hold memory.
    sharp.cache(false);
    return sharp;
  });
  return library;
}

async function render(input: Buffer, size: Size, type: string): Promise<Buffer> {
  const sharp = await sharpLibrary();
  let image = sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, animated: false }).rotate();
  if (size.width === 0 || size.height === 0) image = image.resize(size.width || null, size.height || null);
  else if (size.crop === 'fit') image = image.resize(size.width, size.height, { fit: 'inside', withoutEnlargement: true });
  else image = image.resize(size.width, size.height, { fit: 'cover', position: size.crop });
  const output = outputType(type);
  image = output === 'image/jpeg' ? image.jpeg({ quality: 85 }) : output === 'image/gif' ? image.gif() : image.png();
  return image.toBuffer();
}

/** Makes and finds thumbnails in the file storage; one making of each at a time, a few at once. */
export class Thumbnails {
  private readonly making = new Map<string, Promise<void>>();
  private free = SLOTS;
  private readonly queue: Array<() => void> = [];

  /** Told why a thumbnail could not be made (the original is served then). */
  log?: { warn(details: object, message: string): void };

  constructor(
    private readonly storage: FileStorage,
    private readonly stagingDir: string,
  ) {}

  /**
   * The thumbnail `size` of the file at `originalKey` (an image of `type`, allowed `sizes` by its
   * field), made now if it is not stored yet; undefined when the original is to be served.
   */
  async find(originalKey: string, fileName: string, type: string, sizeText: string, sizes: readonly string[], originalBytes: number): Promise<Thumbnail | undefined> {
    if (!DEFAULT_SIZES.includes(sizeText) && !sizes.includes(sizeText)) return undefined;
    if (!IMAGE_TYPES.has(type) || originalBytes > MAX_INPUT_BYTES) return undefined;
    const size = parseSize(sizeText);
    if (!size) return undefined;
    const name = `${sizeText}_${fileName}`;
    const key = `${thumbsFolder(originalKey)}/${name}`;
    const stored = (info: StoredFileInfo | undefined) => info && { key, name, contentType: outputType(type), info };
    const found = stored(await this.storage.stat(key));
    if (found) return found;
    let making = this.making.get(key);
    if (!making) {
      making = this.make(originalKey, key, size, type).finally(() => this.making.delete(key));
      this.making.set(key, making);
    }
    try {
      await making;
      return stored(await this.storage.stat(key));
    } catch (err) {
      this.log?.warn({ err, file: originalKey, thumb: sizeText }, 'a thumbnail could not be made: the original is served');
      return undefined;
    }
  }

  private async make(originalKey: string, key: string, size: Size, type: string): Promise<void> {
    await this.take();
    const staged = path.join(this.stagingDir, randomId(24));
    try {
      const bytes = await render(await buffer(await this.storage.read(originalKey)), size, type);
      await writeFile(staged, bytes, { flag: 'wx', mode: 0o600 });
      await this.storage.put(key, staged, { contentType: outputType(type) });
    } finally {
      this.give();
      await unlink(staged).catch(() => {});
    }
  }

  private take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(go), 1);
        reject(new Error(`no thumbnail slot within ${WAIT_MS / 1000} s`));
      }, WAIT_MS);
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      this.queue.push(go);
    });
  }

  private give(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.free++;
  }
}

/** The storage folder of a file's thumbnails (removed with the file). */
export function thumbsFolder(fileKey: string): string {
  const slash = fileKey.lastIndexOf('/');
  return `${fileKey.slice(0, slash)}/thumbs_${fileKey.slice(slash + 1)}`;
}
