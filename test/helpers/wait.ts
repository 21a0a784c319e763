/** Polls `probe` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(probe: () => T | Promise<T>, options: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const interval = options.intervalMs ?? 25;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as Exclude<T, false | undefined>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what ?? 'condition'}`);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
