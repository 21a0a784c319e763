/** A hook file (TypeScript or `*.pb.js`) that does not load: where (file and line when known) and why. */
export class HookLoadError extends Error {
  constructor(
    readonly reason: string,
    readonly file?: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(file ? `${file}${line ? `:${line}${column ? `:${column}` : ''}` : ''}: ${reason}` : reason);
    this.name = 'HookLoadError';
  }
}
