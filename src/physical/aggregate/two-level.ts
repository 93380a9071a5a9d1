// Runs an aggregate's two-level plan (skew/aggregate.ts plans it): level-1 tasks over row ranges of a skewed
// partition's blocks (views, no copy), or over pieces cut by the hash of (group, count_distinct value), whose
// states one task then merges.
import { normFor } from '../../kernels/keys.js';
import { partialSchema } from '../../agg/partial.js';
import { type TwoLevelStep, twoLevelSchema } from '../../agg/twolevel.js';
import { type Batch, type Column, type Schema, lanes } from '../../kernels/column.js';
import type { BoundAggregate, KeyNorm } from '../../plan/bound.js';
import type { AggregateSplit } from '../../skew/aggregate.js';
import { isSpilled } from '../../spill/block.js';
import { heldBytes } from '../../spill/spiller.js';
import type { ExecContext } from '../operator.js';
import type { TaskSource } from '../task.js';

/** A column's rows [start, end) as views of its buffers (string offsets rebased: a small copy). */
function viewColumn(c: Column, start: number, end: number): Column {
  const valid = c.valid ? c.valid.subarray(start, end) : null;
  if (c.type.id === 'utf8') {
    const o = c.offsets!,
      base = o[start];
    const offsets = Int32Array.from(o.subarray(start, end + 1), (x) => x - base);
    return {
      type: c.type,
      length: end - start,
      values: (c.values as Uint8Array).subarray(base, o[end]),
      offsets,
      valid,
    };
  }
  const l = lanes(c.type);
  return {
    type: c.type,
    length: end - start,
    values: c.values.subarray(start * l, end * l) as Column['values'],
    valid,
  };
}

/**
 * Blocks cut into consecutive row ranges of at most `rows` rows (a spilled block stays whole: it is read by one task).
 */
function rowRanges(blocks: Batch[], rows: number): Batch[][] {
  const out: Batch[][] = [[]];
  let n = 0;
  const add = (b: Batch) => {
    if (n > 0 && n + b.length > rows) {
      out.push([]);
      n = 0;
    }
    out[out.length - 1].push(b);
    n += b.length;
  };
  for (const b of blocks) {
    if (isSpilled(b)) {
      add(b);
      continue;
    }
    for (let at = 0; at < b.length; ) {
      const take = Math.min(b.length - at, Math.max(1, rows - n));
      add(take === b.length ? b : { length: take, columns: b.columns.map((c) => viewColumn(c, at, at + take)) });
      at += take;
    }
  }
  return out.filter((r) => r.length > 0);
}

/**
 * What the aggregate's reduce tasks read: the shuffled rows (raw) or combiners' partial states;
 * `rows`: with states, how the rows that combiners passed through are laid out.
 */
export interface AggregateInput {
  stage: string;
  mode: 'raw' | 'final';
  schema: Schema;
  groupBy: number[];
  aggs: BoundAggregate[];
  outSchema: Schema;
  rows?: { schema: Schema; groupBy: number[] };
  lead?: number;
}

/** `raw`: blocks of rows that combiners passed through (`a.rows`), beside the blocks of `input`. */
export function aggregateSource(
  a: AggregateInput,
  input: Batch[],
  step?: TwoLevelStep,
  raw: Batch[] = [],
  parts?: { blocks: number; raw: number }[],
): Extract<TaskSource, { kind: 'aggregate' }> {
  if (parts && !step) {
    // partition by partition, each one's states then its rows
    const ordered: Batch[] = [];
    let b = 0,
      r = 0;
    for (const p of parts) {
      for (let k = 0; k < p.blocks; k++) ordered.push(input[b++]);
      for (let k = 0; k < p.raw; k++) ordered.push(raw[r++]);
    }
    return {
      ...aggregateSource(a, ordered),
      ...(raw.length ? { rows: { ...a.rows!, from: 0 } } : {}),
      parts: parts.map((p) => ({ states: p.blocks, rows: p.raw })),
    };
  }
  return {
    kind: 'aggregate',
    mode: a.mode,
    schema: a.schema,
    input: raw.length ? [...input, ...raw] : input,
    groupBy: a.groupBy,
    aggs: a.aggs,
    outSchema: a.outSchema,
    ...(step ? { step } : {}),
    ...(a.lead ? { lead: a.lead } : {}),
    ...(raw.length ? { rows: { ...a.rows!, from: input.length } } : {}),
  };
}

/** The same aggregate over the rows that combiners passed through, as without combiners. */
export const rowsInput = (a: AggregateInput): AggregateInput | null =>
  a.rows ? { ...a, mode: 'raw', schema: a.rows.schema, groupBy: a.rows.groupBy, rows: undefined } : null;

const keyNorms = (schema: Schema, n: number): KeyNorm[] => schema.slice(0, n).map((f) => normFor(f.type));

/**
 * Level 1 of a split partition. Returns level 2's input: the two-level states
 * (as `AggregateInput`, to merge with step `merge`), their blocks, and the
 * bytes of them held against the budget (to release once merged).
 */
export async function levelOne(
  ex: ExecContext,
  a: AggregateInput,
  blocks: Batch[],
  split: AggregateSplit,
  raw: Batch[] = [],
): Promise<{ input: AggregateInput; blocks: Batch[]; held: number }> {
  const g = a.groupBy.length,
    p = split.partition;
  // rows that combiners passed through are read by ranges of their own, aggregated as raw rows
  const rows = rowsInput(a);
  const ranges: [AggregateInput, Batch[]][] = [
    ...rowRanges(blocks, split.targetRows!).map((r): [AggregateInput, Batch[]] => [a, r]),
    ...(rows && raw.length ? rowRanges(raw, split.targetRows!).map((r): [AggregateInput, Batch[]] => [rows, r]) : []),
  ];
  const partial = a.mode === 'raw' ? partialSchema(a.schema, a.groupBy, a.aggs) : a.schema;
  const states: AggregateInput = {
    ...a,
    mode: 'final',
    schema: twoLevelSchema(partial, g, a.aggs),
    groupBy: Array.from({ length: g }, (_, i) => i),
    rows: undefined,
  };
  // Level-1 output is held like shuffle output (one partition): within the budget, or spilled.
  const toStates = (src: TaskSource, label: string) =>
    ex.run(
      {
        source: src,
        ops: [],
        sink: {
          kind: 'partition',
          keys: states.groupBy,
          norms: keyNorms(partial, g),
          partitions: 1,
          spreadNulls: false,
          nullSeed: 0,
        },
      },
      { stage: a.stage, kind: 'reduce', partition: p, split: label },
    );
  let outs: Awaited<ReturnType<typeof toStates>>[];
  if (split.cut === 'rows') {
    outs = await Promise.all(
      ranges.map(([x, r], i) => toStates(aggregateSource(x, r, 'piece'), `two-level piece ${i + 1}/${ranges.length}`)),
    );
  } else {
    const K = split.pieces!;
    const cuts = await Promise.all(
      ranges.map(([x, r], i) =>
        ex.run(
          {
            source: aggregateSource(x, r, 'dedup'),
            ops: [],
            sink: {
              kind: 'partition',
              keys: Array.from({ length: g + 1 }, (_, k) => k),
              norms: keyNorms(partial, g + 1),
              partitions: K,
              spreadNulls: false,
              nullSeed: 0,
            },
          },
          { stage: a.stage, kind: 'split', partition: p, split: `two-level cut ${i + 1}/${ranges.length} into ${K}` },
        ),
      ),
    );
    const dedup: AggregateInput = { ...a, mode: 'final', schema: partial, groupBy: states.groupBy, rows: undefined };
    const pieces = Array.from({ length: K }, (_, k) =>
      cuts.map((c) => c.batches[k]).filter((b): b is Batch => b !== null),
    );
    outs = await Promise.all(
      pieces.flatMap((piece, k) =>
        piece.length ? [toStates(aggregateSource(dedup, piece, 'piece'), `two-level piece ${k + 1}/${K}`)] : [],
      ),
    );
    ex.memory.release(heldBytes(cuts.map((c) => c.batches)));
  }
  const out = outs.map((o) => o.batches);
  return { input: states, blocks: out.flat().filter((b): b is Batch => b !== null), held: heldBytes(out) };
}
