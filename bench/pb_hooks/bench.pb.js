/// The PocketBase-style hooks the bench's Cairn runs with (bench/run.ts passes this folder as
/// --pb-hooks), bound to the create-pb-hooked case's collection only: one before-handler that
/// reads one record by id synchronously through $app, as real pb_hooks files do before a write.

onRecordCreate((e) => {
  // The record the case created in prepare() (whose own create skips the read); the read crosses
  // the worker's blocking channel.
  if (e.record.id !== "benchseed000001") $app.findRecordById("bench_create_pb_hooked", "benchseed000001");
  e.next();
}, "bench_create_pb_hooked");
