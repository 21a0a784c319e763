/**
 * The PostgreSQL cases of `npm run bench`: Cairn on PostgreSQL beside a bare Fastify + `pg` baseline
 * (bench/postgres/baseline.ts) running the same SQL on the same tables. Targets from issue 16.
 */
export interface PgCase {
  name: string;
  description: string;
  kind: 'create' | 'view' | 'list' | 'batch';
  collection: string;
  /** Cairn's throughput as a fraction of the baseline's. */
  target: number;
  /** Records per request (a batch), for the per-record comparison with `pg-create`. */
  units?: number;
}

export const PG_CASES: PgCase[] = [
  { name: 'pg-create', description: 'PostgreSQL: create a record (POST, 4 fields)', kind: 'create', collection: 'bench_pg_create', target: 0.6 },
  { name: 'pg-view-by-id', description: 'PostgreSQL: view a record by id (1,000 records cycled)', kind: 'view', collection: 'bench_pg_view', target: 0.7 },
  { name: 'pg-batch', description: 'PostgreSQL: 50 creates in one batch (POST /api/batch)', kind: 'batch', collection: 'bench_pg_batch', target: 0.6, units: 50 },
  { name: 'pg-list-100k', description: 'PostgreSQL: list 30 of 100,000 records (sort=-created, totals, pages 1-20)', kind: 'list', collection: 'bench_pg_list', target: 0.7 },
];
