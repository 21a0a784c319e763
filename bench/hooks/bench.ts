// The application hooks the bench's Cairn runs with (bench/run.ts passes this folder as --hooks):
// each is bound to its own case's collection or path, so the other cases measure Cairn as an
// application with hooks elsewhere sees it.
import { defineHooks } from 'cairn';
import { CONSTANT } from './lib/constant.ts';

export default defineHooks((app) => {
  // create-hooked: one no-op handler around the write and one after it.
  app.onRecordCreate((e) => e.next(), 'bench_create_hooked');
  app.onRecordAfterCreateSuccess((e) => e.next(), 'bench_create_hooked');
  // view-enriched: one enrich handler deleting a key.
  app.onRecordEnrich((e) => {
    delete e.record.body;
    return e.next();
  }, 'bench_view_enriched');
  // hook-route: a route answering a constant JSON.
  app.routerAdd('GET', '/api/bench/constant', (e) => e.json(200, CONSTANT));
});
