#!/usr/bin/env node
// Where a run's time goes: the tasks of a `--stats` file summed per stage and
// kind (map, reduce, split), with the rows they read, their time and the ns a
// row on one thread (task time over input rows), and the shuffles' bytes.
// Task times are wall time on a worker thread: on a loaded machine they
// include waits for a core, so compare stages within one run.
//
//   node scripts/stage-costs.mjs stats.json
import fs from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: stage-costs.mjs stats.json');
  process.exit(2);
}
const s = JSON.parse(fs.readFileSync(file, 'utf8'));
const rows = new Map();
for (const t of s.tasks.filter((x) => !x.error)) {
  const k = `${t.stage} ${t.kind}`;
  const r = rows.get(k) ?? { tasks: 0, rows: 0, ms: 0 };
  r.tasks++;
  r.rows += t.rows;
  r.ms += t.ms;
  rows.set(k, r);
}
const busy = [...rows.values()].reduce((a, r) => a + r.ms, 0);
console.log(`wall ${s.wallMs.toFixed(0)} ms; task time ${busy.toFixed(0)} ms over all threads`);
console.log(
  `${'stage'.padEnd(24)} ${'tasks'.padStart(6)} ${'rows in'.padStart(12)} ${'task ms'.padStart(9)} ${'share'.padStart(6)} ${'ns/row'.padStart(8)}`,
);
for (const [k, r] of rows) {
  const ns = r.rows > 0 ? ((r.ms * 1e6) / r.rows).toFixed(0) : '-';
  console.log(
    `${k.padEnd(24)} ${String(r.tasks).padStart(6)} ${String(r.rows).padStart(12)} ${r.ms.toFixed(0).padStart(9)} ` +
      `${((100 * r.ms) / busy).toFixed(0).padStart(5)}% ${ns.padStart(8)}`,
  );
}
for (const j of s.joins ?? [])
  console.log(
    `${j.id}: ${j.strategy}${j.broadcast ? ` (${j.broadcast.side}, ${j.broadcast.rows} rows)` : ''}: ${j.reason}`,
  );
for (const x of s.shuffles ?? []) {
  const bytes = x.partitionBytes.reduce((a, b) => a + b, 0),
    n = x.partitionRows.reduce((a, b) => a + b, 0);
  console.log(`shuffle ${x.id}: ${n} rows, ${(bytes / 1048576).toFixed(1)} MB`);
}
