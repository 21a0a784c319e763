import { ApiError, badRequest, type FieldError, validationFailed } from '../../errors.ts';
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
 * (`storage`) or of backups (`backups`) answers. While the files are in CAIRN_STORAGE's bucket (no
 * `s3` section saved) that bucket is checked; otherwise the bucket of the stored settings section
 * (`s3`, or `backups.s3`), which is the one in use once enabled (switch.ts). The check reads an
 * object's metadata, which needs the credentials to work.
 */
export async function testS3(
  files: { readonly onEnvironmentS3: boolean } & FileStorage,
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
  if (files.onEnvironmentS3) return void (await files.stat(key));
  const settings = (await stored())[filesystem as (typeof FILESYSTEMS)[number]];
  if (!settings.enabled) throw badRequest('S3 storage filesystem is not enabled.');
  // Loaded here, not at start: the AWS SDK is the largest thing a start would otherwise compile.
  const { S3FileStorage } = await import('./s3.ts');
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
