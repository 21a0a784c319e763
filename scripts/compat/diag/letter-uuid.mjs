// Diagnosis only: crypto.randomUUID() values that start with a letter, so that collection names a
// suite makes from randomUUID() pass Cairn's current name check and what lies behind shows.
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
const orig = crypto.randomUUID.bind(crypto);
crypto.randomUUID = (...a) => {
  const u = orig(...a);
  return /^[0-9]/.test(u) ? `a${u.slice(1)}` : u;
};
syncBuiltinESMExports();
