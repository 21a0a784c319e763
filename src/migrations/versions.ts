/** Migration versions: `YYYYMMDD_HHMMSS_mmm` in UTC, which sort as strings in time order. */

const VERSION = /^(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})_(\d{3})$/;

export function isVersion(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = VERSION.exec(value);
  if (!m) return false;
  const [y, mo, d, h, mi, s, ms] = m.slice(1).map(Number);
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s, ms));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d && h < 24 && mi < 60 && s < 60;
}

export function versionOf(time: number): string {
  const iso = new Date(time).toISOString(); // 2024-01-02T03:04:05.678Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}_${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}_${iso.slice(20, 23)}`;
}

/** The version for now, moved on to the next free millisecond while `taken` says it is in use. */
export function nextVersion(taken: (version: string) => boolean, now = Date.now()): string {
  let t = now;
  while (taken(versionOf(t))) t++;
  return versionOf(t);
}
