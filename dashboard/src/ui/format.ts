const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** A date as the API writes it (PocketBase's `2024-05-01 09:30:00.000Z`), which not every browser's
 * `Date` reads, or ISO 8601. */
function parseDate(text: string): Date {
  return new Date(/^\d{4}-\d{2}-\d{2} /.test(text) ? `${text.slice(0, 10)}T${text.slice(11)}` : text);
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = parseDate(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

/** "in 5 minutes", "3 hours ago". */
export function fromNow(iso: string | null | undefined): string {
  if (!iso) return '—';
  const diff = (parseDate(iso).getTime() - Date.now()) / 1000;
  if (Number.isNaN(diff)) return iso;
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ];
  for (const [unit, secs] of units) if (Math.abs(diff) >= secs || unit === 'second') return relative.format(Math.round(diff / secs), unit);
  return iso;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** A short text for any record value in a table cell. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '';
  if (Array.isArray(value)) return value.map(cellText).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const UNITS: Array<[string, number]> = [
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** A number of seconds in words, in its largest unit: "3 minutes", "1.5 hours", "30 days". */
export function formatDuration(seconds: number): string {
  const [unit, size] = UNITS.find(([, size]) => seconds >= size) ?? UNITS[UNITS.length - 1];
  return new Intl.NumberFormat(undefined, { style: 'unit', unit, unitDisplay: 'long', maximumFractionDigits: 1 }).format(seconds / size);
}
