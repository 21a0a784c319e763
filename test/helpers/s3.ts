import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

// The SDK's notice that its 2027 releases will need Node.js 22 is not what these tests are about.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** s3rver's built-in credentials: it checks every request's signature against them. */
const ACCESS_KEY = 'S3RVER';
const SECRET = 'S3RVER';

/** A real S3-compatible server (s3rver, objects kept in a temporary directory) on loopback. */
export interface S3Server {
  endpoint: string;
  /** A client of the server, to look at the bucket from outside Cairn. */
  client: S3Client;
  /** Creates a bucket with a fresh name and returns the CAIRN_* variables that store files in it. */
  bucket(): Promise<{ name: string; env: Record<string, string> }>;
  /** Keys of the objects in `bucket` under `prefix`, sorted. */
  keys(bucket: string, prefix?: string): Promise<string[]>;
  /** An object's content. */
  object(bucket: string, key: string): Promise<Buffer>;
  close(): Promise<void>;
}

/** The CAIRN_* variables of a bucket at `endpoint` (no server needs to answer there). */
export function s3Env(endpoint: string, bucket: string): Record<string, string> {
  return {
    CAIRN_STORAGE: 's3',
    CAIRN_S3_ENDPOINT: endpoint,
    CAIRN_S3_BUCKET: bucket,
    CAIRN_S3_REGION: 'us-east-1',
    CAIRN_S3_ACCESS_KEY: ACCESS_KEY,
    CAIRN_S3_SECRET: SECRET,
    CAIRN_S3_FORCE_PATH_STYLE: 'on',
  };
}

export async function startS3(): Promise<S3Server> {
  const directory = mkdtempSync(path.join(tmpdir(), 'cairn-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    client,
    async bucket() {
      const name = `cairn-${randomBytes(6).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: name }));
      return { name, env: s3Env(endpoint, name) };
    },
    async keys(bucket, prefix) {
      const keys: string[] = [];
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken }));
        for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return keys.sort();
    },
    async object(bucket, key) {
      const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await res.Body!.transformToByteArray());
    },
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
