import { importPKCS8, SignJWT } from 'jose';
import { badRequest, type FieldError, validationFailed } from '../../errors.ts';
import { bodyOf } from '../body.ts';

/** Apple's longest client secret lifetime: six months, in seconds. */
const MAX_SECONDS = 15777000;
const PRIVATE_KEY = /-----BEGIN PRIVATE KEY----[\s\S]+-----END PRIVATE KEY-----/;
const REQUIRED: FieldError = { code: 'validation_required', message: 'Cannot be blank.' };

/**
 * Sign in with Apple's client secret (PocketBase's `POST /api/settings/apple/generate-client-secret`):
 * an ES256 JWT made from the app's key (`.p8`, PKCS #8), issued by the team to the client id, for
 * `duration` seconds. The key is used for this signature only; nothing is kept.
 */
export async function appleClientSecret(input: unknown): Promise<{ secret: string }> {
  const body = bodyOf(input);
  const text = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : '');
  const errors: Record<string, FieldError> = {};
  if (text('clientId') === '') errors.clientId = REQUIRED;
  for (const key of ['teamId', 'keyId']) {
    if (text(key) === '') errors[key] = REQUIRED;
    else if (text(key).length !== 10) errors[key] = { code: 'validation_length_invalid', message: 'The length must be exactly 10.' };
  }
  if (text('privateKey') === '') errors.privateKey = REQUIRED;
  else if (!PRIVATE_KEY.test(text('privateKey'))) errors.privateKey = { code: 'validation_match_invalid', message: 'Must be a PEM private key (PKCS #8).' };
  const duration = body.duration;
  if (duration === undefined || duration === null || duration === 0 || duration === '') errors.duration = REQUIRED;
  else if (typeof duration !== 'number' || !Number.isInteger(duration)) errors.duration = { code: 'validation_invalid_value', message: 'Must be a whole number of seconds.' };
  else if (duration < 1) errors.duration = { code: 'validation_min_greater_equal_than_required', message: 'Must be no less than 1.' };
  else if (duration > MAX_SECONDS) errors.duration = { code: 'validation_max_less_equal_than_required', message: `Must be no greater than ${MAX_SECONDS}.` };
  if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Invalid client secret data.');

  let key: CryptoKey;
  try {
    key = (await importPKCS8(text('privateKey').trim(), 'ES256')) as CryptoKey;
  } catch (err) {
    throw badRequest(`Failed to generate client secret. Raw error: \n${(err as Error).message}`);
  }
  const now = Math.floor(Date.now() / 1000);
  const secret = await new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: text('keyId') })
    .setIssuer(text('teamId'))
    .setSubject(text('clientId'))
    .setAudience('https://appleid.apple.com')
    .setIssuedAt(now)
    .setExpirationTime(now + (duration as number))
    .sign(key);
  return { secret };
}
