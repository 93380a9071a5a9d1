// A window node in Spark SQL: the input's columns and one `fn(...) OVER (...)` per function, cast to the plan's
// result types (Spark's ranks and ntile are INT, a decimal sum decimal(p+10,s)). Ranking functions and lag/lead take
// no frame in Spark; a RANGE offset over a date key is an interval of days.
import type { BoundNode, BoundWindowFn } from '../plan/bound.js';
import { col, sparkType } from './lower-expr.js';

type WindowNode = Extract<BoundNode, { kind: 'window' }>;

const NO_FRAME = new Set(['row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead']);

function frame(n: WindowNode, f: BoundWindowFn): string {
  if (NO_FRAME.has(f.fn)) return '';
  const key = n.orderBy[0] ? n.input.schema[n.orderBy[0].col].type : null;
  const days = f.frame.unit === 'range' && key?.id === 'date32';
  const b = (x: number | null, end: boolean) => {
    if (x === null) return `UNBOUNDED ${end ? 'FOLLOWING' : 'PRECEDING'}`;
    if (x === 0) return 'CURRENT ROW';
    const v = days ? `INTERVAL ${Math.abs(x)} DAYS` : String(Math.abs(x));
    return `${v} ${x < 0 ? 'PRECEDING' : 'FOLLOWING'}`;
  };
  return ` ${f.frame.unit.toUpperCase()} BETWEEN ${b(f.frame.start, false)} AND ${b(f.frame.end, true)}`;
}

function call(f: BoundWindowFn): string {
  const c = col(f.col);
  switch (f.fn) {
    case 'ntile':
    case 'nth_value':
      return f.fn === 'ntile' ? `NTILE(${f.n})` : `NTH_VALUE(${c}, ${f.n})`;
    case 'lag':
    case 'lead':
      return `${f.fn.toUpperCase()}(${c}, ${f.n}${f.def >= 0 ? `, ${col(f.def)}` : ''})`;
    case 'count':
      return f.col < 0 ? 'COUNT(*)' : `COUNT(${c})`;
    default:
      return `${f.fn.toUpperCase()}(${f.col < 0 ? '' : c})`;
  }
}

export function lowerWindow(n: WindowNode, lower: (m: BoundNode) => string): string {
  const w = n.input.schema.length;
  const over = [
    n.partitionBy.length ? `PARTITION BY ${n.partitionBy.map(col).join(', ')}` : '',
    n.orderBy.length
      ? `ORDER BY ${n.orderBy.map((k) => `${col(k.col)} ${k.desc ? 'DESC' : 'ASC'} NULLS ${k.nullsFirst ? 'FIRST' : 'LAST'}`).join(', ')}`
      : '',
  ]
    .filter(Boolean)
    .join(' ');
  const fns = n.fns.map(
    (f, k) => `CAST(${call(f)} OVER (${over}${frame(n, f)}) AS ${sparkType(f.type)}) AS ${col(w + k)}`,
  );
  return `SELECT *, ${fns.join(', ')} FROM (${lower(n.input)}) t`;
}
