// Computed columns between a broadcast probe and the aggregate above it
// (TPC-H's sum(l_extendedprice * (1 - l_discount)) over a star join): when
// they read only the probing side's columns and cannot fail, they are
// computed on the probing batches before the probe, so the probe stays the
// last row operator and its matches feed the fused aggregate without the
// joined rows ever being gathered (joins/probe.ts probeAggregate).
import type { Field, Schema } from '../kernels/column.js';
import type { Combine } from '../agg/combiner.js';
import type { Pipeline } from '../exec/physical.js';
import type { RowOp } from '../exec/task.js';
import { MAX_PRECISION } from '../kernels/decimal.js';
import { type BoundExpr, asDecimal } from '../expr/types.js';
import { type ProbeOp, probeFuses } from './probe.js';

/** A column after the probe's trailing operators: a joined column, or the k-th hoisted expression. */
type Origin = { joined: number } | { hoisted: number };

const LOGIC = new Set(['=', '!=', '<', '<=', '>', '>=', 'and', 'or', 'not', 'is_null']);

/**
 * Whether an expression cannot raise an error at run time: computed on
 * probing rows the join would drop, it must not fail where the plan would
 * not. Decimal + - * whose exact result type needed no cap at 38 digits (so
 * no value can overflow), float + - *, date parts, comparisons and logic,
 * case over such parts; anything else (integer arithmetic, casts, division) is
 * left after the probe.
 */
export function cannotFail(e: BoundExpr): boolean {
  switch (e.k) {
    case 'col': case 'lit': return true;
    case 'cast': return false;
    case 'case': return [...e.whens, ...e.thens, ...(e.else ? [e.else] : [])].every(cannotFail);
    case 'fn': {
      if (!e.args.every(cannotFail)) return false;
      if (LOGIC.has(e.fn)) return true;
      if ((e.fn === 'year' || e.fn === 'month' || e.fn === 'day') && e.args[0].type.id === 'date32') return true;
      if (e.fn !== '+' && e.fn !== '-' && e.fn !== '*') return false;
      if (e.type.id === 'float64') return e.args.every((a) => a.type.id === 'float64');
      if (e.type.id !== 'decimal') return false;
      const [x, y] = e.args.map(asDecimal);
      const digits = e.fn === '*' ? x.precision! + y.precision!
        : Math.max(x.precision! - x.scale!, y.precision! - y.scale!) + Math.max(x.scale!, y.scale!) + 1;
      return digits <= MAX_PRECISION;
    }
  }
}

/** The expression with every column index mapped (null when `f` refuses one). */
function remapCols(e: BoundExpr, f: (col: number) => number | null): BoundExpr | null {
  switch (e.k) {
    case 'col': { const c = f(e.col); return c === null ? null : { ...e, col: c }; }
    case 'lit': return e;
    case 'cast': { const a = remapCols(e.arg, f); return a && { ...e, arg: a }; }
    case 'fn': {
      const args = e.args.map((a) => remapCols(a, f));
      return args.every((a) => a !== null) ? { ...e, args: args as BoundExpr[] } : null;
    }
    case 'case': {
      const whens = e.whens.map((a) => remapCols(a, f)), thens = e.thens.map((a) => remapCols(a, f));
      const other = e.else && remapCols(e.else, f);
      if (whens.some((a) => a === null) || thens.some((a) => a === null) || (e.else && !other)) return null;
      return { ...e, whens: whens as BoundExpr[], thens: thens as BoundExpr[], else: other };
    }
  }
}

/**
 * The broadcast probe's pipeline with the computes (and projections) after it
 * moved before it, and the aggregate's columns renumbered for the joined rows
 * it then sees: the probing side's columns, the hoisted ones, the table's
 * (the table's first when it is the join's left side). Null when a compute
 * reads the table's columns, may fail, or the fused aggregate would not serve.
 */
export function hoistBeforeProbe(pipeline: Pipeline, after: RowOp[], combine: Combine): { pipeline: Pipeline; combine: Combine; probe: ProbeOp } | null {
  const probe = pipeline.ops[pipeline.ops.length - 1];
  if (probe?.kind !== 'probe') return null;
  const probing = probe.buildFirst ? probe.rightSchema : probe.leftSchema;
  const np = probing.length, nb = probe.buildFirst ? probe.leftSchema.length : probe.rightSchema.length;
  const off = probe.buildFirst ? nb : 0; // where the probing side's columns start in the joined rows
  const rowsOnly = probe.type === 'semi' || probe.type === 'anti'; // the table's columns are not in the joined rows
  const joinedCols = rowsOnly ? np : np + nb;
  let cols: Origin[] = Array.from({ length: joinedCols }, (_, j) => ({ joined: j }));
  const hoisted: BoundExpr[] = [];
  for (const op of after) {
    if (op.kind === 'project') { cols = op.indices.map((i) => cols[i]); continue; }
    if (op.kind !== 'compute') return null;
    for (const e of op.exprs) {
      if (!cannotFail(e)) return null;
      // its columns within the probing batch
      const onProbing = remapCols(e, (c) => {
        const o = cols[c];
        return 'joined' in o && o.joined >= off && o.joined < off + np ? o.joined - off : null;
      });
      if (!onProbing) return null;
      cols.push({ hoisted: hoisted.length });
      hoisted.push(onProbing);
    }
  }
  const nh = hoisted.length;
  // the joined rows after the move: [table, probing, hoisted] or [probing, hoisted, table]
  const at = (o: Origin) => ('hoisted' in o ? off + np + o.hoisted : probe.buildFirst || o.joined < np ? o.joined : o.joined + nh);
  const hoistedFields: Field[] = hoisted.map((e, k) => ({ name: `$hoisted${k}`, type: e.type }));
  const extended = [...probing, ...hoistedFields];
  const op: ProbeOp = probe.buildFirst ? { ...probe, rightSchema: extended } : { ...probe, leftSchema: extended };
  const schema: Schema = probe.buildFirst ? [...probe.leftSchema, ...extended] : rowsOnly ? extended : [...extended, ...probe.rightSchema];
  // the aggregate's columns keep their names (group columns name the states' columns)
  const mapped = new Map<number, Field>();
  let clash = false;
  const to = (c: number) => {
    const k = at(cols[c]), prev = mapped.get(k);
    if (prev && prev.name !== combine.schema[c].name) clash = true;
    mapped.set(k, combine.schema[c]);
    return k;
  };
  const groupBy = combine.groupBy.map(to), aggs = combine.aggs.map((a) => (a.col < 0 ? a : { ...a, col: to(a.col) }));
  if (clash) return null;
  for (const [k, f] of mapped) schema[k] = f;
  const moved: Combine = { groupBy, aggs, schema };
  if (!probeFuses(op, groupBy, aggs)) return null;
  const ops: RowOp[] = [...pipeline.ops.slice(0, -1), ...(nh > 0 ? [{ kind: 'compute' as const, exprs: hoisted }] : []), op];
  return { pipeline: { ...pipeline, ops, schema }, combine: moved, probe: op };
}
