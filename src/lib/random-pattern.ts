import { randomInt } from 'node:crypto';
import randexpModule from 'randexp';

// randexp is CommonJS whose types declare an ES default export.
const RandExp = ((randexpModule as unknown as { default?: unknown }).default ?? randexpModule) as typeof import('randexp').default;

/**
 * A maker of random strings a regular expression matches (PocketBase's `[a-z0-9]{15}` ids, a text
 * field's `autogeneratePattern`, `$security.randomStringByRegex`), from the system's secure random
 * numbers. Repetitions without a bound (`+`, `*`) make at most 10. Throws on a pattern it cannot read.
 */
export function patternGenerator(pattern: string): { gen(): string } {
  const generator = new RandExp(pattern);
  generator.max = 10;
  generator.randInt = (from: number, to: number) => randomInt(from, to + 1);
  return generator;
}
