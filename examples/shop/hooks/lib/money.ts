/** Prices and totals are whole cents (exact sums); this is how they read in mail. */
export function formatCents(cents: number): string {
  return `€${(cents / 100).toFixed(2)}`;
}
