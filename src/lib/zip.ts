import { badRequest, isApiError, tooLarge } from '../errors.ts';

/** ZIP archives in memory (yazl to write, yauzl to read), with limits against oversized and hostile archives.
 * Both are imported when first used (exports, uploads, backups): a server that never zips never loads them. */

export interface ZipEntry {
  name: string;
  data: Buffer;
}

export async function zipEntries(entries: readonly ZipEntry[]): Promise<Buffer> {
  const { ZipFile } = await import('yazl');
  const zip = new ZipFile();
  for (const e of entries) zip.addBuffer(e.data, e.name, { mtime: new Date(0) });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function invalidArchive(err: unknown) {
  return badRequest(`Invalid ZIP archive: ${(err as Error).message.replace(/\.+$/, '')}.`);
}

export interface UnzipLimits {
  maxEntries: number;
  /** Largest uncompressed entry, bytes. */
  maxEntrySize: number;
  /** Largest uncompressed total, bytes (a small archive can expand enormously). */
  maxTotalSize: number;
}

/**
 * The file entries of an archive (directories skipped). yauzl refuses absolute paths and `..`
 * segments and checks declared sizes against the data; every such problem is a 400 and oversize a 413.
 */
export async function unzipEntries(buffer: Buffer, limits: UnzipLimits): Promise<ZipEntry[]> {
  const out: ZipEntry[] = [];
  let total = 0;
  const { fromBufferPromise } = await import('yauzl');
  let zip;
  try {
    zip = await fromBufferPromise(buffer, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true });
  } catch (err) {
    throw invalidArchive(err);
  }
  try {
    if (zip.entryCount > limits.maxEntries) throw tooLarge(`The archive has more than ${limits.maxEntries} entries.`);
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/')) continue;
      if (entry.uncompressedSize > limits.maxEntrySize) throw tooLarge(`"${entry.fileName}" is larger than ${limits.maxEntrySize} bytes.`);
      total += entry.uncompressedSize;
      if (total > limits.maxTotalSize) throw tooLarge(`The archive expands to more than ${limits.maxTotalSize} bytes.`);
      const stream = await zip.openReadStreamPromise(entry);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      out.push({ name: entry.fileName, data: Buffer.concat(chunks) });
    }
  } catch (err) {
    if (isApiError(err)) throw err;
    throw invalidArchive(err);
  } finally {
    zip.close();
  }
  return out;
}
