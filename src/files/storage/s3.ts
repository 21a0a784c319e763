import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { S3Config } from '../../config.ts';
import { ApiError, notFound } from '../../errors.ts';
import type { FileStorage, StoredFileInfo } from './types.ts';

/** The bucket and how to reach it (CAIRN_S3_*, config.ts). */
export type S3Options = S3Config;

/** What a request sees when the bucket cannot be used; the cause goes to the log. */
function unavailable(err: unknown): ApiError {
  const error = new ApiError(503, 'The file storage is unavailable; try again shortly.');
  error.cause = err;
  return error;
}

function isNotFound(err: unknown): boolean {
  if (!(err instanceof S3ServiceException)) return false;
  return err.name === 'NotFound' || err.name === 'NoSuchKey' || err.$metadata?.httpStatusCode === 404;
}

/**
 * Files in an S3-compatible bucket, under the same keys as the local layout
 * (`<db>/<collection>/<record id>/<file name>`), so every node of an instance serves every upload.
 * Any failure to reach the bucket is a 503 for the request that needed it, never a crash; a missing
 * object is a missing file.
 */
export class S3FileStorage implements FileStorage {
  readonly remote = true;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3Options) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      credentials: options.accessKey !== undefined && options.secret !== undefined ? { accessKeyId: options.accessKey, secretAccessKey: options.secret } : undefined,
      // Checksums only where S3 requires them: the SDK's default sends streamed uploads in
      // `aws-chunked` framing with a trailing checksum, which many S3-compatible services store as is.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // An endpoint that does not answer fails the request within seconds instead of holding it.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
      maxAttempts: 3,
    });
  }

  /**
   * Uploads the staged file (as one request, or in parts for large files: lib-storage buffers at most
   * `queueSize × partSize` bytes), then removes the staged copy.
   */
  async put(key: string, source: string, meta: { contentType: string }): Promise<void> {
    try {
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.bucket, Key: key, Body: createReadStream(source), ContentType: meta.contentType },
        queueSize: 2,
        partSize: 8 * 1024 * 1024,
      });
      await upload.done();
    } catch (err) {
      throw unavailable(err);
    }
    await rm(source, { force: true });
  }

  async stat(key: string): Promise<StoredFileInfo | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: head.ContentLength ?? 0, modified: head.LastModified ?? new Date(0), contentType: head.ContentType };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw unavailable(err);
    }
  }

  async read(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    try {
      const Range = range ? `bytes=${range.start}-${range.end ?? ''}` : undefined;
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range }));
      // In Node.js the body is the response's IncomingMessage.
      return object.Body as Readable;
    } catch (err) {
      // Deleted since its stat: gone, like any missing file.
      if (isNotFound(err)) throw notFound();
      throw unavailable(err);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** The objects whose keys start with `prefix` (the whole bucket for ''), page by page. */
  async list(prefix = ''): Promise<Array<{ key: string; size: number; modified: Date }>> {
    const out: Array<{ key: string; size: number; modified: Date }> = [];
    try {
      let ContinuationToken: string | undefined;
      do {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix || undefined, ContinuationToken }));
        for (const o of page.Contents ?? []) if (o.Key) out.push({ key: o.Key, size: o.Size ?? 0, modified: o.LastModified ?? new Date(0) });
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    } catch (err) {
      throw unavailable(err);
    }
    return out;
  }

  /** Lists the objects under `<prefix>/` page by page (1000 at most each) and deletes each page in one request. */
  async deletePrefix(prefix: string): Promise<void> {
    const Prefix = `${prefix}/`;
    try {
      let ContinuationToken: string | undefined;
      do {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix, ContinuationToken }));
        const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
        if (keys.length > 0) {
          const result = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
          if (result.Errors && result.Errors.length > 0) {
            const first = result.Errors[0];
            throw new Error(`deleting ${result.Errors.length} objects under ${Prefix} failed, first ${first.Key}: ${first.Code} ${first.Message}`);
          }
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    } catch (err) {
      throw unavailable(err);
    }
  }

  close(): void {
    this.client.destroy();
  }
}
