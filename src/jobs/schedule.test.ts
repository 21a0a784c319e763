// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration, parseSchedule, ScheduleError } from './schedule.ts';

test('durations combine units', () => {
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1d2h'), 93_600_000);
  assert.equal(parseDuration('1500ms'), 1500);
  for (const bad of ['', '30', 's', '1x', '1h 30m', '-1s', '1.5h', '30s!']) assert.equal(parseDuration(bad), undefined, bad);
});

test('valid schedules parse; invalid ones throw a ScheduleError', () => {
  for (const ok of ['* * * * *', '*/5 * * * * *', '0 3 * * MON-FRI', '@hourly', '@every 30s', '@EVERY 2m']) parseSchedule(ok, 'UTC');
  for (const bad of ['', '* * * *', '* * * * * * *', '60 * * * *', '@every', '@every 0s', '@every 500ms', '@every 367d', '@everyday', '@every 1x']) {
    assert.throws(() => parseSchedule(bad, 'UTC'), ScheduleError, bad);
  }
  assert.throws(() => parseSchedule('* * * * *', 'Not/AZone'), ScheduleError);
});

test('a running schedule reports its next run and stops', () => {
  const running = parseSchedule('@every 1h', 'UTC').start(() => assert.fail('must not fire'));
  const next = running.nextRun()!.getTime();
  assert.ok(next > Date.now() + 3_590_000 && next <= Date.now() + 3_600_000);
  running.stop();
  assert.equal(running.nextRun(), null);
  const cron = parseSchedule('0 0 1 1 *', 'Europe/Paris').start(() => assert.fail('must not fire'));
  assert.ok(cron.nextRun()!.getTime() > Date.now());
  cron.stop();
  assert.equal(cron.nextRun(), null);
});
