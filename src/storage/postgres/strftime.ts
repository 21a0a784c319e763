import { join, raw, type Sql, sql } from '../sql.ts';

/**
 * SQLite's `strftime(format, time, modifier…)` on PostgreSQL, for PocketBase's filter function of that
 * name. The format and the modifiers are always literals in a filter, so they are translated here,
 * once per filter, into plain SQL over a `timestamp` (UTC): each `%x` becomes a `to_char` or
 * arithmetic piece, each modifier a step of date arithmetic. Only the time value is read per row, by
 * `sqlite_time` (strftimeFunctionsSql), which parses SQLite's time values the way SQLite does (text
 * dates with or without a time and a zone, `HH:MM`, `now`, and numbers as Julian days or, after
 * `unixepoch`, seconds) and gives NULL for anything else. Results that SQLite would give as NULL (an
 * unknown `%x`, a value that is not a time) are '' as in PocketBase.
 */

// SQLite counts years astronomically (1 BC is year 0) and prints them with "%04d"; PostgreSQL has no
// year 0. `sf.y` is SQLite's year.
const YEAR = "CASE WHEN sf.y >= 0 THEN lpad(sf.y::text, 4, '0') ELSE '-' || lpad((-sf.y)::text, greatest(3, length((-sf.y)::text)), '0') END";

// Pieces over the parsed time, `sf.t`. Where to_char has the field as SQLite pads it, to_char.
const PIECES: Record<string, string> = {
  d: "to_char(sf.t, 'DD')",
  e: "lpad(to_char(sf.t, 'FMDD'), 2, ' ')",
  f: "to_char(sf.t, 'SS.MS')",
  F: `${YEAR} || to_char(sf.t, '-MM-DD')`,
  G: "to_char(sf.t, 'IYYY')",
  g: "to_char(sf.t, 'IY')",
  H: "to_char(sf.t, 'HH24')",
  I: "to_char(sf.t, 'HH12')",
  j: "to_char(sf.t, 'DDD')",
  // SQLite prints the double nearest the Julian day (its milliseconds / 86400000) with 16 significant
  // digits: the double is the day rounded to its binary precision (2^-32 to 2^-30 of a day for the
  // years 0 to 9999), then to 9 decimals.
  J: `rtrim(to_char(round(round((round(extract(epoch FROM sf.t) * 1000) + 210866760000000) * sf.scale / 86400000) / CAST(sf.scale AS numeric(40, 20)), 9), 'FM9999999990.999999999'), '.')`,
  k: "lpad(to_char(sf.t, 'FMHH24'), 2, ' ')",
  l: "lpad(to_char(sf.t, 'FMHH12'), 2, ' ')",
  m: "to_char(sf.t, 'MM')",
  M: "to_char(sf.t, 'MI')",
  p: "to_char(sf.t, 'AM')",
  P: "to_char(sf.t, 'am')",
  R: "to_char(sf.t, 'HH24:MI')",
  s: 'floor(extract(epoch FROM sf.t))::bigint::text',
  S: "to_char(sf.t, 'SS')",
  T: "to_char(sf.t, 'HH24:MI:SS')",
  u: "to_char(sf.t, 'ID')",
  // Week of the year, weeks starting on Sunday (%U) or Monday (%W), the days before the first in week 00.
  U: "lpad(((extract(doy FROM sf.t)::int + 6 - extract(dow FROM sf.t)::int) / 7)::text, 2, '0')",
  V: "to_char(sf.t, 'IW')",
  w: 'extract(dow FROM sf.t)::int::text',
  W: "lpad(((extract(doy FROM sf.t)::int + 7 - extract(isodow FROM sf.t)::int) / 7)::text, 2, '0')",
  Y: YEAR,
};
// With `subsec`, %s has milliseconds.
const SUBSEC_SECONDS = "to_char(extract(epoch FROM sf.t)::numeric, 'FM999999999990.000')";

const EMPTY = sql`''`;
const SHIFT = /^([-+]?(?:\d+(?:\.\d*)?|\.\d+))\s+(second|minute|hour|day|month|year)s?$/;
const NUMERIC_AS = new Set(['unixepoch', 'julianday', 'auto']);

export function pgStrftime(fn: string, format: string, time: Sql | undefined, modifiers: readonly string[]): Sql | { unsupported: string } {
  const f = raw(fn);
  // `unixepoch`, `julianday` and `auto` say how a number is read, right after it; anywhere else SQLite
  // gives NULL.
  const first = modifiers[0]?.toLowerCase();
  const numericAs = time && first !== undefined && NUMERIC_AS.has(first) ? first : '';
  let t = time ? sql`${f}.sqlite_time(${time}, CAST(${numericAs} AS text))` : sql`(statement_timestamp() AT TIME ZONE 'UTC')`;
  let subsec = false;
  for (const modifier of numericAs ? modifiers.slice(1) : modifiers) {
    const m = modifier.toLowerCase();
    const shift = SHIFT.exec(m);
    if (shift) {
      const n = Number(shift[1]);
      const unit = shift[2];
      if (unit === 'month' || unit === 'year') {
        // SQLite moves the month and lets a day past its end run into the next month (January 31st
        // and a month is March 3rd); a fraction counts as 30 or 365 days.
        const whole = Math.trunc(n);
        t = sql`${f}.sqlite_months(${t}, CAST(${unit === 'year' ? whole * 12 : whole} AS integer))`;
        const days = (n - whole) * (unit === 'year' ? 365 : 30);
        if (days !== 0) t = sql`(${t} + CAST(${days} AS double precision) * interval '1 day')`;
      } else {
        t = sql`(${t} + CAST(${n} AS double precision) * ${raw(`interval '1 ${unit}'`)})`;
      }
      continue;
    }
    const start = /^start of (month|year|day)$/.exec(m);
    if (start) {
      t = sql`date_trunc(${raw(`'${start[1]}'`)}, ${t})`;
      continue;
    }
    const weekday = /^weekday ([0-6])(?:\.0*)?$/.exec(m);
    if (weekday) {
      t = sql`(${t} + ((CAST(${Number(weekday[1])} AS integer) - extract(dow FROM ${t})::int + 7) % 7) * interval '1 day')`;
      continue;
    }
    // PostgreSQL's clock is read in UTC, which is where `localtime` and `utc` leave a time on a
    // server running in UTC.
    if (m === 'localtime' || m === 'utc') continue;
    if (m === 'subsec' || m === 'subsecond') {
      subsec = true;
      continue;
    }
    if (NUMERIC_AS.has(m)) return EMPTY;
    return { unsupported: modifier };
  }

  const pieces: Sql[] = [];
  let literal = '';
  for (let i = 0; i < format.length; i++) {
    if (format[i] !== '%') {
      literal += format[i];
      continue;
    }
    const spec = format[++i];
    if (spec === '%') {
      literal += '%';
      continue;
    }
    const piece = spec === 's' && subsec ? SUBSEC_SECONDS : PIECES[spec];
    if (piece === undefined) return EMPTY;
    if (literal !== '') pieces.push(sql`CAST(${literal} AS text)`);
    literal = '';
    pieces.push(sql`${raw(piece)}`);
  }
  if (literal !== '' || pieces.length === 0) pieces.push(sql`CAST(${literal} AS text)`);
  const year = 'CASE WHEN extract(year FROM st.t) < 0 THEN extract(year FROM st.t)::int + 1 ELSE extract(year FROM st.t)::int END';
  const scale = `CASE WHEN st.t < timestamp '1029-09-15 12:00' THEN 4294967296 WHEN st.t < timestamp '6771-07-07 12:00' THEN 2147483648 ELSE 1073741824 END`;
  return sql`(SELECT CASE WHEN sf.t IS NULL THEN '' ELSE ${join(pieces, ' || ')} END FROM (SELECT st.t, ${raw(year)} AS y, ${raw(scale)} AS scale FROM (SELECT ${t} AS t) AS st) AS sf)`;
}

/** The functions pgStrftime's SQL calls, in schema `fn`. */
export function strftimeFunctionsSql(fn: string): string[] {
  return [
    // NULL for what SQLite would not read as a time; checked before it is built, as a plpgsql
    // EXCEPTION block would cost a subtransaction a row.
    `CREATE OR REPLACE FUNCTION ${fn}.sqlite_time(v text, numeric_as text) RETURNS timestamp LANGUAGE plpgsql STABLE PARALLEL SAFE AS $fn$
      DECLARE
        m text[];
        n double precision;
        y int := 2000; mo int := 1; d int := 1; h int := 0; mi int := 0; s numeric := 0;
        zone interval := interval '0';
      BEGIN
        IF v IS NULL THEN RETURN NULL; END IF;
        IF v ~ '^[-+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?$' THEN
          n := v::double precision;
          IF numeric_as = 'unixepoch' OR (numeric_as = 'auto' AND NOT (n >= 0 AND n < 5373484.5)) THEN
            IF n < -210866760000 OR n > 253402300799 THEN RETURN NULL; END IF;
            RETURN timestamp '1970-01-01' + n * interval '1 second';
          END IF;
          IF n < 0 OR n >= 5373484.5 THEN RETURN NULL; END IF;
          RETURN timestamp '1970-01-01' + (n - 2440587.5) * interval '1 day';
        END IF;
        IF numeric_as <> '' THEN RETURN NULL; END IF;
        IF lower(v) = 'now' THEN RETURN statement_timestamp() AT TIME ZONE 'UTC'; END IF;
        m := regexp_match(v, '^(?:([0-9]{4})-([0-9]{2})-([0-9]{2}))?(?:(?:^|[\\sT]+)([0-9]{2}):([0-9]{2})(?::([0-9]{2}(?:\\.[0-9]*)?))?\\s*(?:[zZ]|([-+])([0-9]{2}):([0-9]{2}))?)?\\s*$');
        IF m IS NULL OR (m[1] IS NULL AND m[4] IS NULL) THEN RETURN NULL; END IF;
        IF m[1] IS NOT NULL THEN y := m[1]::int; mo := m[2]::int; d := m[3]::int; END IF;
        IF m[4] IS NOT NULL THEN h := m[4]::int; mi := m[5]::int; s := round(coalesce(m[6], '0')::numeric, 3); END IF;
        IF y < 1 OR mo < 1 OR mo > 12 OR d < 1 OR d > 31 OR h > 24 OR mi > 59 OR s >= 60 THEN RETURN NULL; END IF;
        IF m[7] IS NOT NULL THEN
          zone := m[8]::int * interval '1 hour' + m[9]::int * interval '1 minute';
          IF m[7] = '-' THEN zone := -zone; END IF;
        END IF;
        -- A day past the month's end runs into the next month, as in SQLite (February 30th is March 2nd).
        RETURN make_timestamp(y, mo, 1, 0, 0, 0) + (d - 1) * interval '1 day' + h * interval '1 hour' + mi * interval '1 minute' + s * interval '1 second' - zone;
      END $fn$;`,
    `CREATE OR REPLACE FUNCTION ${fn}.sqlite_months(t timestamp, n integer) RETURNS timestamp LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
      SELECT date_trunc('month', $1) + $2 * interval '1 month' + ($1 - date_trunc('month', $1)) $fn$;`,
  ];
}
