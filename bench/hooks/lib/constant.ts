/** What the bench's hook route answers, and its baseline too. */
export const CONSTANT = { ok: true, service: 'bench', items: [1, 2, 3] };
