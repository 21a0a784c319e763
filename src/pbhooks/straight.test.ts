// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isStraightLine } from './straight.ts';

// Handlers as real files write them: the ones that may be tried on the main thread, and the ones
// that must not (they could loop, call code they do not show, block, or act outside the run).
const cases: [string, boolean][] = [
  [`(e) => {
  // The record the case created
  if (e.record.id !== "benchseed000001") $app.findRecordById("bench_create_pb_hooked", "benchseed000001");
  e.next();
}`, true],
  [`(e) => { e.next(); }`, true],
  [`function (e) { e.record.set("x", e.record.getString("y").toUpperCase()); e.next() }`, true],
  [`(ev) => { if (!ev.auth) throw new BadRequestError("no"); ev.next() }`, true],
  [`(e) => { for (;;) {} }`, false],
  [`(e) => { while (true) {} }`, false],
  [`(e) => { helper(e); e.next() }`, false],
  [`(e) => { utils.check(e); e.next() }`, false],
  [`(e) => { e.record.get("tags").forEach((t) => t) }`, false],
  [`(e) => { $app.save(new Record()); e.next() }`, false],
  [`(e) => { try { e.next() } catch (err) {} }`, false],
  [`(e) => { const x = \`\${helper()}\`; }`, false],
  [`(e) => { const s = "while (true) {}"; e.next() }`, true],
  [`(e) => { if (/a+/.test(e.record.getString("x"))) throw new BadRequestError("x"); e.next() }`, false],
  [`(e) => { sleep(1000); e.next() }`, false],
  [`(e) => { $os.writeFile("x", "y"); e.next() }`, false],
  [`(e) => { console.log("x"); e.next() }`, true],
  [`(e) => { const a = e.record.getInt("a") / 2; const b = a / 3; e.record.set("b", b); e.next() }`, true],
  [`(e) => { new Helper(); }`, false],
  [`(e) => { const { id, title } = e.record.publicExport(); if (title === "") throw new BadRequestError(id); e.next() }`, true],
  [`(e) => { $app.dao().findRecordById("a", "b"); e.next() }`, true],
  [`(e) => { e.app.findRecordById("a", "b"); e.next() }`, true],
  [`(e) => { e.app.save(e.record); e.next() }`, false],
  [`(e) => { const t = $app.findFirstRecordByFilter("teams", "code = {:c}", { c: e.record.getString("team") }); e.record.set("n", t.getString("name")); e.next() }`, true],
  [`(e) => { const all = $app.findRecordsByFilter("x", "a > 1"); if (all.length > 3) throw new BadRequestError("too many"); e.next() }`, true],
  [`(e) => { $app.countRecords("x"); e.next() }`, false],
];

test('isStraightLine tells straight-line handlers from the others', () => {
  for (const [source, straight] of cases) assert.equal(isStraightLine(source), straight, source);
});
