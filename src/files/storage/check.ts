import { badRequest, type FieldError, validationFailed } from '../../errors.ts';
import type { FileStorage } from './types.ts';

const FILESYSTEMS = ['storage', 'backups'];

/**
 * PocketBase's `POST /api/settings/test/s3 {filesystem}`: whether the S3 bucket of uploaded files
 * (`storage`) or of backups (`backups`) answers. Cairn keeps both in the one bucket of `CAIRN_STORAGE`
 * when it is S3; the check reads an object's metadata there, which needs the credentials to work.
 */
export async function testS3(storage: FileStorage, onS3: boolean, input: unknown): Promise<void> {
  const filesystem = typeof input === 'object' && input !== null ? (input as Record<string, unknown>).filesystem : undefined;
  let problem: FieldError | undefined;
  if (typeof filesystem !== 'string' || filesystem === '') problem = { code: 'validation_required', message: 'Cannot be blank.' };
  else if (!FILESYSTEMS.includes(filesystem)) problem = { code: 'validation_in_invalid', message: `Must be one of: ${FILESYSTEMS.join(', ')}.` };
  if (problem) throw validationFailed({ filesystem: problem }, 'Failed to test the S3 filesystem.');
  if (!onS3) throw badRequest('S3 storage filesystem is not enabled (CAIRN_STORAGE).');
  // A failure to reach the bucket is a 503 from the storage itself.
  await storage.stat(`cairn-s3-test/${Date.now()}`);
}
