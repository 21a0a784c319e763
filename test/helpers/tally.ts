/** The statuses of `replies`, counted: `{ 200: 1, 400: 7 }` (what requests sent at once answered). */
export function tally(replies: readonly { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}
