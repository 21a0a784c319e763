import { ApiError, badRequest, type FieldError, validationFailed } from '../../errors.ts';
import { S3FileStorage } from './s3.ts';
import type { FileStorage } from './types.ts';

const FILESYSTEMS = ['storage', 'backups'] as const;

/** An `s3` settings section (PocketBase's S3Config), as stored. */
export interface StoredS3 {
  enabled: boolean;
  bucket: string;
  region: string;
  endpoint: string;
  accessKey: string;
  secret?: string;
  forcePathStyle: boolean;
}

/**
 * PocketBase's `POST /api/settings/test/s3 {filesystem}`: whether the S3 bucket of uploaded files
 * (`storage`) or of backups (`backups`) answers. When CAIRN_STORAGE is S3 that bucket is what Cairn
 * uses for both, and it is checked; otherwise the bucket of the stored settings section (`s3`, or
 * `backups.s3`) is, so settings can be tried before the environment switches to them. The check reads
 * an object's metadata, which needs the credentials to work.
 */
export async function testS3(
  files: { storage: FileStorage; onS3: boolean },
  stored: () => Promise<{ storage: StoredS3; backups: StoredS3 }>,
  input: unknown,
): Promise<void> {
  const filesystem = typeof input === 'object' && input !== null ? (input as Record<string, unknown>).filesystem : undefined;
  let problem: FieldError | undefined;
  if (typeof filesystem !== 'string' || filesystem === '') problem = { code: 'validation_required', message: 'Cannot be blank.' };
  else if (!(FILESYSTEMS as readonly string[]).includes(filesystem)) problem = { code: 'validation_in_invalid', message: `Must be one of: ${FILESYSTEMS.join(', ')}.` };
  if (problem) throw validationFailed({ filesystem: problem }, 'Failed to test the S3 filesystem.');
  const key = `cairn-s3-test/${Date.now()}`;
  // A failure to reach the bucket Cairn uses is a 503 from the storage itself.
  if (files.onS3) return void (await files.storage.stat(key));
  const settings = (await stored())[filesystem as (typeof FILESYSTEMS)[number]];
  if (!settings.enabled) throw badRequest('S3 storage filesystem is not enabled.');
  const probe = new S3FileStorage({
    endpoint: settings.endpoint || undefined,
    bucket: settings.bucket,
    region: settings.region,
    accessKey: settings.accessKey || undefined,
    secret: settings.secret || undefined,
    forcePathStyle: settings.forcePathStyle,
  });
  try {
    await probe.stat(key);
  } catch (err) {
    if (err instanceof ApiError && err.status === 503) throw badRequest('Failed to reach the S3 bucket with these settings.');
    throw err;
  } finally {
    probe.close();
  }
}
