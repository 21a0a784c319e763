/** See build-check.js. */
export function buildProblem(root: string): string | undefined;
