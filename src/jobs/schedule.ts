import { Cron } from 'croner';

/**
 * Cron schedules, domain-free: 5-field (minute precision) or 6-field (seconds first) cron expressions
 * and croner's nicknames (`@hourly`, `@daily`, …) through croner, plus `@every <duration>`
 * (`@every 30s`, `@every 1h30m`), which croner lacks and which runs at a fixed interval counted from
 * an anchor (a job's last change), so that every node of an instance fires on the same ticks.
 * `fire` gets the tick's scheduled time, which names the run on every node alike.
 */

export class ScheduleError extends Error {}

/** A schedule that runs: `stop()` ends it; `nextRun()` is when it fires next. */
export interface RunningSchedule {
  nextRun(): Date | null;
  stop(): void;
}

export interface Schedule {
  /** Fires at each tick with its scheduled time; `anchor` (ms) is where `@every` intervals count from. */
  start(fire: (tick: Date) => void, anchor?: number): RunningSchedule;
}

const EVERY = /^@every\s+(\S+)$/i;
const DURATION_PART = /(\d+)(ms|s|m|h|d)/gy;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const MIN_INTERVAL_MS = 1000;
const MAX_INTERVAL_MS = 366 * UNIT_MS.d;
// setTimeout's limit; longer waits are taken in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** `1h30m`, `45s`, `1500ms`: Go-style durations (plus `d` for days), in milliseconds. */
export function parseDuration(text: string): number | undefined {
  DURATION_PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = DURATION_PART.exec(text); m; m = DURATION_PART.exec(text)) {
    total += Number(m[1]) * UNIT_MS[m[2]];
    consumed = DURATION_PART.lastIndex;
  }
  return consumed === text.length && consumed > 0 ? total : undefined;
}

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

class EverySchedule implements Schedule {
  constructor(private readonly intervalMs: number) {}

  start(fire: (tick: Date) => void, anchor = Date.now()): RunningSchedule {
    const now = Date.now();
    let next = anchor + Math.max(1, Math.ceil((now - anchor) / this.intervalMs)) * this.intervalMs;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      timer = setTimeout(tick, Math.min(MAX_TIMER_MS, Math.max(0, next - Date.now())));
      timer.unref();
    };
    const tick = () => {
      if (Date.now() < next) return arm();
      // Runs missed while the process was busy are skipped, not piled up.
      let tick = next;
      while (next <= Date.now()) {
        tick = next;
        next += this.intervalMs;
      }
      arm();
      fire(new Date(tick));
    };
    arm();
    return {
      nextRun: () => (timer ? new Date(next) : null),
      stop: () => {
        clearTimeout(timer);
        timer = undefined;
      },
    };
  }
}

class CronSchedule implements Schedule {
  constructor(
    private readonly pattern: string,
    private readonly timezone: string,
  ) {}

  start(fire: (tick: Date) => void): RunningSchedule {
    // Cron ticks fall on whole seconds; croner calls a little after, so the tick is the nearest second.
    const job = new Cron(this.pattern, { timezone: this.timezone, unref: true, catch: true }, () => fire(new Date(Math.round(Date.now() / 1000) * 1000)));
    return { nextRun: () => job.nextRun(), stop: () => job.stop() };
  }
}

/** Parses a schedule; throws ScheduleError with a message for the API when it is not valid. */
export function parseSchedule(expression: string, timezone: string): Schedule {
  if (!isTimeZone(timezone)) throw new ScheduleError(`Unknown time zone "${timezone}"; use an IANA name such as "Europe/Paris" or "UTC".`);
  const text = expression.trim();
  const every = EVERY.exec(text);
  if (every) {
    const ms = parseDuration(every[1]);
    if (ms === undefined) throw new ScheduleError(`Invalid duration "${every[1]}": use a number with ms, s, m, h or d, such as 30s or 1h30m.`);
    if (ms < MIN_INTERVAL_MS || ms > MAX_INTERVAL_MS) throw new ScheduleError('The interval must be between 1s and 366d.');
    return new EverySchedule(ms);
  }
  if (text.startsWith('@every')) throw new ScheduleError('Use "@every <duration>", such as "@every 30s".');
  try {
    // Built paused only to validate the expression (field count, ranges, names).
    new Cron(text, { paused: true, timezone }).stop();
  } catch (err) {
    throw new ScheduleError(`Invalid cron expression: ${(err as Error).message.replace(/^CronPattern: /, '')}`);
  }
  return new CronSchedule(text, timezone);
}
