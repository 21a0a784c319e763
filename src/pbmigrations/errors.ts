/** Where a pb_migrations failure happened: the file, and the line when the error tells it. */
export interface PbMigrationPlace {
  path: string;
  file?: string;
  db?: string;
  direction?: 'up' | 'down';
  line?: number;
  column?: number;
}

/**
 * A pb_migrations file that did not apply (or revert): it stops `cairn serve` and `cairn migrate`,
 * printed as a compiler prints an error, `path:line:column: reason`, so an editor can jump to it.
 * Nothing of the file is left behind: its transaction was rolled back.
 */
export class PbMigrationError extends Error {
  constructor(
    readonly reason: string,
    readonly place: PbMigrationPlace,
  ) {
    const where = [place.path, place.line, place.line !== undefined ? place.column : undefined].filter((p) => p !== undefined).join(':');
    const what = place.direction ? `${place.direction === 'up' ? 'applying' : 'reverting'} it on database "${place.db}"` : '';
    super(`${where}: ${reason}${what ? ` (while ${what}; nothing of it was kept)` : ''}`);
    this.name = 'PbMigrationError';
  }
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The line and column of `err` in the file at `path`: from the error itself (`line`, `column`, as a
 * runtime may report them), else from the first frame of its stack that names the file (an error
 * thrown by the file, or a syntax error, which V8 reports as `path:line`).
 */
export function locate(err: unknown, path: string): { line?: number; column?: number } {
  const e = err as { line?: unknown; column?: unknown; stack?: unknown } | undefined;
  if (e && typeof e.line === 'number') return { line: e.line, column: typeof e.column === 'number' ? e.column : undefined };
  const stack = typeof e?.stack === 'string' ? e.stack : '';
  const m = new RegExp(`${escaped(path)}:(\\d+)(?::(\\d+))?`).exec(stack);
  return m ? { line: Number(m[1]), column: m[2] ? Number(m[2]) : undefined } : {};
}

/** The error's own words: an API error's message with its field errors (nested ones by path), else the message. */
export function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const fields: string[] = [];
  const walk = (v: unknown, at: string) => {
    if (!v || typeof v !== 'object' || fields.length >= 5) return;
    const o = v as Record<string, unknown>;
    if (typeof o.message === 'string' && typeof o.code === 'string') {
      fields.push(`${at}: ${o.message}`);
      return;
    }
    for (const [k, x] of Object.entries(o)) walk(x, at ? `${at}.${k}` : k);
  };
  walk((err as { data?: unknown }).data, '');
  const name = err.name && err.name !== 'Error' && err.name !== 'ApiError' ? `${err.name}: ` : '';
  return `${name}${err.message}${fields.length > 0 ? ` (${fields.join('; ')})` : ''}`;
}
