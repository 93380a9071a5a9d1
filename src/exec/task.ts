// A task: a source (scan split, in-memory batches, a join or an aggregation
// over shuffled partitions), a chain of row-wise operators, and a sink
// (collect, or hash-partition for the next shuffle). Pure: the same function
// runs on a worker thread or on the coordinator.
import { aggregateBatch } from '../agg/aggregate.js';
import { readRowGroups } from '../io/parquet.js';
import {
  type Batch, type Field, type Schema, batchBytes, buffersOf, concatBatches, gather, gatherBatch,
} from '../kernels/column.js';
import { selectRows } from '../kernels/filter.js';
import { hashJoin } from '../kernels/join.js';
import { buildKeys, partitionOf } from '../kernels/keys.js';
import type { BoundAggregate, BoundPredicate, KeyNorm } from '../plan/bound.js';
import type { JoinType } from '../plan/spec.js';

export type RowOp = { kind: 'filter'; pred: BoundPredicate } | { kind: 'project'; indices: number[] };

export type TaskSource =
  | { kind: 'scan'; path: string; rowGroups: number[]; fields: Field[] }
  | { kind: 'batches'; schema: Schema; batches: Batch[] }
  | {
      kind: 'join'; type: JoinType;
      leftSchema: Schema; rightSchema: Schema; left: Batch[]; right: Batch[];
      leftKeys: number[]; rightKeys: number[]; leftNorms: KeyNorm[]; rightNorms: KeyNorm[];
    }
  | { kind: 'aggregate'; schema: Schema; input: Batch[]; groupBy: number[]; aggs: BoundAggregate[]; outSchema: Schema };

export type TaskSink =
  | { kind: 'collect' }
  /** hash-partition rows by key; rows with a null key are spread round-robin from `nullSeed` */
  | { kind: 'partition'; keys: number[]; norms: KeyNorm[]; partitions: number; nullSeed: number };

export interface TaskSpec { source: TaskSource; ops: RowOp[]; sink: TaskSink }

export interface TaskResult {
  /** collect: the output batches; partition: one batch (or null) per partition */
  batches: (Batch | null)[];
  inputRows: number;
  outputRows: number;
  partitionRows?: number[];
  partitionBytes?: number[];
  ms: number;
}

async function produce(src: TaskSource): Promise<{ batches: Batch[]; rows: number }> {
  switch (src.kind) {
    case 'scan': {
      const batches = await readRowGroups(src.path, src.rowGroups, src.fields);
      return { batches, rows: batches.reduce((s, b) => s + b.length, 0) };
    }
    case 'batches':
      return { batches: src.batches, rows: src.batches.reduce((s, b) => s + b.length, 0) };
    case 'join': {
      const l = concatBatches(src.leftSchema, src.left);
      const r = concatBatches(src.rightSchema, src.right);
      const lk = buildKeys(l, src.leftKeys, src.leftNorms);
      const rk = buildKeys(r, src.rightKeys, src.rightNorms);
      const m = hashJoin(src.type, lk, rk);
      const cols = l.columns.map((c) => gather(c, m.left, m.n));
      if (src.type !== 'semi' && src.type !== 'anti') for (const c of r.columns) cols.push(gather(c, m.right, m.n));
      return { batches: [{ length: m.n, columns: cols }], rows: l.length + r.length };
    }
    case 'aggregate': {
      const all = concatBatches(src.schema, src.input);
      return { batches: [aggregateBatch(all, src.groupBy, src.aggs, src.outSchema)], rows: all.length };
    }
  }
}

function applyOps(b: Batch, ops: RowOp[]): Batch {
  for (const op of ops) {
    if (op.kind === 'filter') {
      const { idx, n } = selectRows(b, op.pred);
      if (n < b.length) b = gatherBatch(b, idx, n);
    } else {
      b = { length: b.length, columns: op.indices.map((i) => b.columns[i]) };
    }
  }
  return b;
}

/** Split rows among partitions by the hash of their key (high hash bits). */
export function partitionBatches(batches: Batch[], sink: Extract<TaskSink, { kind: 'partition' }>) {
  const P = sink.partitions;
  const rows = new Array<number>(P).fill(0);
  const perPart: Int32Array[][] = Array.from({ length: P }, () => []);
  const counts: number[][] = Array.from({ length: P }, () => []);
  let rr = sink.nullSeed;
  const pids: Int32Array[] = [];
  for (const b of batches) {
    const keys = buildKeys(b, sink.keys, sink.norms);
    const pid = new Int32Array(b.length);
    const cnt = new Int32Array(P);
    const { hash, anyNull } = keys;
    for (let i = 0; i < b.length; i++) {
      const p = anyNull !== null && anyNull[i] ? rr++ % P : partitionOf(hash[i], P);
      pid[i] = p;
      cnt[p]++;
    }
    pids.push(pid);
    // Row indices per partition for this batch, filled by a counting pass.
    const idx = Array.from({ length: P }, (_, p) => new Int32Array(cnt[p]));
    const fill = new Int32Array(P);
    for (let i = 0; i < b.length; i++) { const p = pid[i]; idx[p][fill[p]++] = i; }
    for (let p = 0; p < P; p++) { perPart[p].push(idx[p]); counts[p].push(cnt[p]); rows[p] += cnt[p]; }
  }
  const out: (Batch | null)[] = [];
  const bytes = new Array<number>(P).fill(0);
  for (let p = 0; p < P; p++) {
    if (rows[p] === 0) { out.push(null); continue; }
    const pieces: Batch[] = [];
    batches.forEach((b, k) => { if (counts[p][k] > 0) pieces.push(gatherBatch(b, perPart[p][k])); });
    const schema = batches[0].columns.map((c) => ({ name: '', type: c.type }));
    const block = concatBatches(schema, pieces);
    bytes[p] = batchBytes(block);
    out.push(block);
  }
  return { out, rows, bytes };
}

export async function runTask(t: TaskSpec): Promise<TaskResult> {
  const t0 = performance.now();
  const { batches, rows } = await produce(t.source);
  const outBatches = batches.map((b) => applyOps(b, t.ops)).filter((b) => b.length > 0);
  const outputRows = outBatches.reduce((s, b) => s + b.length, 0);
  if (t.sink.kind === 'collect') {
    return { batches: outBatches, inputRows: rows, outputRows, ms: performance.now() - t0 };
  }
  const { out, rows: partitionRows, bytes: partitionBytes } = partitionBatches(outBatches, t.sink);
  return { batches: out, inputRows: rows, outputRows, partitionRows, partitionBytes, ms: performance.now() - t0 };
}

export function resultBuffers(r: TaskResult): ArrayBuffer[] {
  return [...buffersOf(r.batches.filter((b): b is Batch => b !== null))];
}
