// The bound (logical) plan: the operator tree with every column resolved to an
// index and every output schema known. Immutable; run-time state lives elsewhere.
import type { DataType, Field, Schema } from '../kernels/column.js';
import type { AggregateFnName, JoinType, WindowFnName } from './spec.js';

import type { DecimalValue } from '../kernels/decimal.js';
import type { CsvRange } from '../io/csv.js';
import type { BoundExpr } from '../expr/types.js';

/**
 * A literal in the representation of the column it is compared with (a decimal column: its scaled integer and scale).
 */
export type Literal = number | bigint | string | boolean | DecimalValue | null;

export type BoundPredicate =
  | { kind: 'cmp'; col: number; op: '=' | '!=' | '<' | '<=' | '>' | '>='; value: Literal }
  | { kind: 'in'; col: number; values: Literal[] }
  | { kind: 'isNull'; col: number; isNull: boolean }
  | { kind: 'and' | 'or'; preds: BoundPredicate[] }
  | { kind: 'not'; pred: BoundPredicate }
  /** any other predicate: a bool expression (src/expr) */
  | { kind: 'expr'; expr: BoundExpr };

/** How a key column is brought to a common form so that both sides hash and compare alike. */
export type KeyNorm =
  /** scale: timestamps of different units are multiplied to the finer unit */
  | { kind: 'int'; scale?: number }
  | { kind: 'float' }
  /**
   * decimals and integers compared by value: each side multiplied by 10^mul
   * to a common scale; as 64-bit words, or (wide) as the 16 bytes of a
   * 128-bit integer when the common form may need more than 18 digits
   */
  | { kind: 'dec'; mul: number; wide: boolean }
  | { kind: 'str' }
  | { kind: 'bool' };

export interface BoundAggregate {
  fn: AggregateFnName;
  col: number;
  as: string;
  type: DataType;
  /** the aggregated column is a decimal (sums are exact over 64/128-bit lanes; eager aggregation refuses them) */
  decimal?: boolean;
  /** quantiles: the fraction (median: 0.5) */
  q?: number;
}

/**
 * A window frame as offsets from the current row (negative: preceding), null: unbounded; `range`: offsets of the
 * single order key's value (in its scaled integer for decimals, days for dates), 0 the current row's peers.
 */
export interface BoundFrame {
  unit: 'rows' | 'range';
  start: number | null;
  end: number | null;
}

/** One window function: `col` its argument (-1: none), `def` lag/lead's default column (-1: null). */
export interface BoundWindowFn {
  fn: WindowFnName;
  col: number;
  as: string;
  type: DataType;
  frame: BoundFrame;
  /** ntile's buckets, nth_value's n, lag/lead's offset */
  n: number;
  def: number;
  /** count, sum, avg over the frame's distinct non-null values (min and max bind without it: the same answer) */
  distinct?: boolean;
}

/**
 * A map task's input: row groups of one file (all of it when `wholeFile`), or
 * with `offset` the `rows` rows from that offset of its one row group (plan/map-splits.ts).
 */
export interface FileSplit {
  path: string;
  rowGroups: number[];
  rows: number;
  bytes: number;
  wholeFile?: boolean;
  offset?: number;
  /** rows of each of `rowGroups` where several row groups were merged into one split (plan/map-splits.ts) */
  groupRows?: number[];
  /** a CSV file's chunk of whole records (io/csv.ts): read as text, no row groups */
  csv?: Omit<CsvRange, 'path'>;
}

interface Base {
  id: string;
  schema: Schema;
}

export type BoundNode =
  | (Base & {
      kind: 'scan';
      source: string;
      splits: FileSplit[];
      /** columns of a type the engine cannot read: an error only if the pruned plan still reads them */
      unreadable?: Record<string, { file: string; type: string }>;
    })
  | (Base & { kind: 'filter'; input: BoundNode; pred: BoundPredicate })
  | (Base & { kind: 'project'; input: BoundNode; indices: number[] })
  /** the input's columns followed by one computed column per expression */
  | (Base & { kind: 'compute'; input: BoundNode; exprs: BoundExpr[] })
  | (Base & {
      kind: 'join';
      type: JoinType;
      left: BoundNode;
      right: BoundNode;
      leftKeys: number[];
      rightKeys: number[];
      leftNorms: KeyNorm[];
      rightNorms: KeyNorm[];
      /** the plan's `"reorder": false`: kept as written by the join order (plan/join-order.ts) */
      fixed?: boolean;
    })
  | (Base & {
      kind: 'aggregate';
      input: BoundNode;
      groupBy: number[];
      aggs: BoundAggregate[];
      /**
       * the first `lead` group columns are expected to determine the others (a dimension's key and its columns, see
       * plan/eager-push.ts): the shuffle hashes those only, and groups are found by them and checked (agg/group-ids.ts)
       */
      lead?: number;
    })
  | (Base & { kind: 'sort'; input: BoundNode; by: { col: number; desc: boolean; nullsFirst: boolean }[] })
  | (Base & { kind: 'limit'; input: BoundNode; count: number; offset: number })
  /**
   * the input's columns followed by one column per function; with `keep` (column pruning, plan/prune.ts), only
   * those input columns (ascending) and then the functions': a task gathers into sorted order only what it emits
   * and what its functions read
   */
  | (Base & {
      kind: 'window';
      input: BoundNode;
      partitionBy: number[];
      orderBy: { col: number; desc: boolean; nullsFirst: boolean }[];
      fns: BoundWindowFn[];
      keep?: number[];
      /**
       * a filter above keeps only the rows whose function `fn` (an index of `fns`: row_number, rank or dense_rank,
       * as every function of the window is) is at most `n` (plan/window-topn.ts): the window may drop the rows that
       * cannot be among them before computing (physical/window/topn.ts); the filter stays above
       */
      topN?: { fn: number; n: number };
    })
  // set operations (plan/bind-setops.ts): a union of all rows and a literal table are pipeline sources; the rest
  // is compiled onto them, aggregates and filters
  /** every row of every input; each input already converted to this schema */
  | (Base & { kind: 'union'; inputs: BoundNode[] })
  /** literal rows: one expression per column (a literal, cast to the column's type) */
  | (Base & { kind: 'values'; rows: BoundExpr[][] })
  /**
   * each input row once per copy: the copy's columns of it (-1: null), then its tag (int64); grouping sets feed
   * an aggregate through it (their input rows, or the rows aggregated by every key when the sets nest)
   */
  | (Base & { kind: 'expand'; input: BoundNode; copies: { cols: number[]; tag: number }[] })
  /** each input row as many times as its column `col` says (none when it is not positive): INTERSECT/EXCEPT ALL */
  | (Base & { kind: 'repeat'; input: BoundNode; col: number });

/** A bound join: what the join family runs and what an aggregate above one asks of it (physical/aggregate/stage.ts). */
export type BoundJoin = Extract<BoundNode, { kind: 'join' }>;

/** A join's output columns: the left's, then the right's, a name taken already suffixed `_right`, `_right2`, ... */
export function joinSchema(l: Field[], r: Field[]): Field[] {
  const schema = [...l];
  const taken = new Set(schema.map((f) => f.name));
  for (const f of r) {
    let name = f.name;
    if (taken.has(name)) {
      name = `${f.name}_right`;
      for (let k = 2; taken.has(name); k++) name = `${f.name}_right${k}`;
    }
    taken.add(name);
    schema.push({ name, type: f.type });
  }
  return schema;
}
