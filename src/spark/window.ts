// A window node in Spark SQL: the input's columns and one `fn(...) OVER (...)` per function, cast to the plan's
// result types (Spark's ranks and ntile are INT, a decimal sum decimal(p+10,s)). Ranking functions and lag/lead take
// no frame in Spark; a RANGE offset over a date key is an interval of days.
//
// A window with hot partitions (window-split.ts finds them and the cut values) is rewritten in two passes, as the
// local engine splits one:
//   tagged    the input, with __hk (which hot key a row's partition is, null when none) and __pc (its piece: by
//             ranges of the first ORDER BY column, cut at values, so equal ORDER BY values stay in one piece; 0
//             when not hot)
//   pass 1    each function over PARTITION BY keys, __pc: a hot key's pieces are tasks of their own; a key that is
//             not hot is one piece, its window as before
//   totals    per (hot key, piece), from the tagged input: rows, count(x), sum(x), min(x), max(x), distinct ORDER
//             BY values; carried over the pieces before each (a window over these few rows)
//   pass 2    pass 1's rows joined (broadcast) with their piece's carried totals: row_number, rank and counts add
//             the rows before, dense_rank the distinct values before, sums the sum, min/max the least/greatest
import type { BoundNode, BoundWindowFn } from '../plan/bound.js';
import type { WindowFnName } from '../plan/spec.js';
import { WINDOW_FNS } from '../plan/window-fns.js';
import { col, sparkType } from './lower-expr.js';
import type { HotKey } from './salt.js';

export type WindowNode = Extract<BoundNode, { kind: 'window' }>;

/** How one window is split: its hot partition keys and, per key, the cut values of the first ORDER BY column. */
export interface WindowSplit {
  keys: HotKey[];
  /** per hot key, the values where a new piece starts (in the window's order): pieces = cuts + 1 */
  cuts: { text: string; sql: string }[][];
  /**
   * per hot key, its pieces' tags (__pc), ascending in the window's order, unique over the keys and never 0: chosen
   * so that Spark's hash partitioning puts the pieces in different shuffle partitions (window-split.ts)
   */
  tags: number[][];
}

/** A split window as the stats and --explain show it. */
export interface SplitWindowStat {
  window: string;
  orderBy: string;
  keys: string[][];
  pieces: number[];
  cuts: string[][];
}

/** The split window as --explain and the stats show it. */
export function splitStat(n: WindowNode, s: WindowSplit): SplitWindowStat {
  return {
    window: n.id,
    orderBy: n.input.schema[n.orderBy[0].col].name,
    keys: s.keys.map((k) => k.text),
    pieces: s.cuts.map((c) => c.length + 1),
    cuts: s.cuts.map((c) => c.map((v) => v.text)),
  };
}

function frame(n: WindowNode, f: BoundWindowFn): string {
  if (!WINDOW_FNS[f.fn].framed) return '';
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

/** Each function's Spark SQL call (before OVER), by name: a new window function needs its entry. */
const CALLS: Record<WindowFnName, (f: BoundWindowFn) => string> = {
  row_number: () => 'ROW_NUMBER()',
  rank: () => 'RANK()',
  dense_rank: () => 'DENSE_RANK()',
  percent_rank: () => 'PERCENT_RANK()',
  cume_dist: () => 'CUME_DIST()',
  ntile: (f) => `NTILE(${f.n})`,
  lag: (f) => `LAG(${col(f.col)}, ${f.n}${f.def >= 0 ? `, ${col(f.def)}` : ''})`,
  lead: (f) => `LEAD(${col(f.col)}, ${f.n}${f.def >= 0 ? `, ${col(f.def)}` : ''})`,
  first_value: (f) => `FIRST_VALUE(${col(f.col)})`,
  last_value: (f) => `LAST_VALUE(${col(f.col)})`,
  nth_value: (f) => `NTH_VALUE(${col(f.col)}, ${f.n})`,
  count: (f) => (f.col < 0 ? 'COUNT(*)' : `COUNT(${col(f.col)})`),
  sum: (f) => `SUM(${col(f.col)})`,
  avg: (f) => `AVG(${col(f.col)})`,
  min: (f) => `MIN(${col(f.col)})`,
  max: (f) => `MAX(${col(f.col)})`,
};

const call = (f: BoundWindowFn): string => CALLS[f.fn](f);

/**
 * The function over the window `over`. Spark has no DISTINCT window aggregates: a frame's distinct values are its
 * collect_set (nulls skipped), counted by size() and summed by aggregate() (null when empty, as SQL's sum).
 */
function windowed(f: BoundWindowFn, over: string): string {
  if (!f.distinct) return `${call(f)} OVER (${over})`;
  const set = `COLLECT_SET(${col(f.col)}) OVER (${over})`;
  const sum = (t: string) => `AGGREGATE(${set}, CAST(NULL AS ${t}), (a, y) -> CAST(coalesce(a, 0) + y AS ${t}))`;
  if (f.fn === 'count') return `SIZE(${set})`;
  if (f.fn === 'sum') return sum(sparkType(f.type));
  return `${sum('DOUBLE')} / NULLIF(SIZE(${set}), 0)`;
}

export function lowerWindow(n: WindowNode, lower: (m: BoundNode) => string, split?: WindowSplit): string {
  const all = split ? splitWindow(n, split, lower(n.input)) : everyColumn(n, lower);
  if (!n.keep) return all;
  // the input columns kept (plan/prune.ts) and the functions', renumbered as the window's schema
  const w = n.input.schema.length;
  const keep = n.keep;
  const cols = [
    ...keep.map((c, i) => `${col(c)} AS ${col(i)}`),
    ...n.fns.map((_, k) => `${col(w + k)} AS ${col(keep.length + k)}`),
  ];
  return `SELECT ${cols.join(', ')} FROM (${all}) t`;
}

/** The window over the input's columns, each of them and one per function. */
function everyColumn(n: WindowNode, lower: (m: BoundNode) => string): string {
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
    (f, k) => `CAST(${windowed(f, `${over}${frame(n, f)}`)} AS ${sparkType(f.type)}) AS ${col(w + k)}`,
  );
  return `SELECT *, ${fns.join(', ')} FROM (${lower(n.input)}) t`;
}

/**
 * The window in Spark SQL with its hot partitions split (the two passes above); exact for the functions
 * window-split.ts `splittable` admits.
 */
function splitWindow(n: WindowNode, s: WindowSplit, input: string): string {
  const w = n.input.schema.length;
  const keys = n.partitionBy.map(col);
  const o = n.orderBy[0];
  const v = col(o.col);
  const op = o.desc ? '>' : '<';
  const hk = `CASE ${s.keys.map((h, i) => `WHEN ${keys.map((k, j) => `${k} = ${h.sql[j]}`).join(' AND ')} THEN ${i}`).join(' ')} END`;
  const piece = (cuts: WindowSplit['cuts'][number], tags: number[]) =>
    `CASE WHEN ${v} IS NULL THEN ${tags[o.nullsFirst ? 0 : cuts.length]} ${cuts
      .map((c, i) => `WHEN ${v} ${op} ${c.sql} THEN ${tags[i]}`)
      .join(' ')} ELSE ${tags[cuts.length]} END`;
  const pc = `CASE ${s.cuts.map((c, i) => `WHEN __hk = ${i} THEN ${piece(c, s.tags[i])}`).join(' ')} ELSE 0 END`;
  const tagged = `(SELECT *, ${pc} AS __pc FROM (SELECT *, ${hk} AS __hk FROM (${input}) t) t)`;
  const order = n.orderBy
    .map((k) => `${col(k.col)} ${k.desc ? 'DESC' : 'ASC'} NULLS ${k.nullsFirst ? 'FIRST' : 'LAST'}`)
    .join(', ');
  // a hot key's piece is partitioned by its tag alone (the keys null: Spark's hash skips them), so that the tags
  // choose the shuffle partitions; a key that is not hot by its keys (and tag 0)
  const parts = keys.map((k) => `CASE WHEN __hk IS NULL THEN ${k} END`);
  const over = `PARTITION BY ${[...parts, '__pc'].join(', ')} ORDER BY ${order}`;
  const pass1: string[] = [];
  const aggs = ['COUNT(*) AS __c'];
  const carried = ['SUM(__c) OVER pw AS __oc'];
  const out: string[] = [];
  n.fns.forEach((f, k) => {
    const x = col(f.col);
    const win = (call: string, as: string) => pass1.push(`${call} OVER (${over}${frame(n, f)}) AS ${as}`);
    const sumOf = (local: string, off: string) =>
      `CASE WHEN ${off} IS NULL THEN ${local} WHEN ${local} IS NULL THEN ${off} ELSE ${local} + ${off} END`;
    let res: string;
    switch (f.fn) {
      case 'row_number':
      case 'rank':
        win(`${f.fn.toUpperCase()}()`, `__l${k}`);
        res = `__l${k} + coalesce(__oc, 0)`;
        break;
      case 'dense_rank': {
        win('DENSE_RANK()', `__l${k}`);
        if (!aggs.some((a) => a.endsWith('AS __d'))) {
          aggs.push(`COUNT(DISTINCT struct(${n.orderBy.map((c) => col(c.col)).join(', ')})) AS __d`);
          carried.push('SUM(__d) OVER pw AS __od');
        }
        res = `__l${k} + coalesce(__od, 0)`;
        break;
      }
      case 'count':
        win(f.col < 0 ? 'COUNT(*)' : `COUNT(${x})`, `__l${k}`);
        if (f.col < 0) res = `__l${k} + coalesce(__oc, 0)`;
        else {
          aggs.push(`COUNT(${x}) AS __c${k}`);
          carried.push(`SUM(__c${k}) OVER pw AS __oc${k}`);
          res = `__l${k} + coalesce(__oc${k}, 0)`;
        }
        break;
      case 'sum':
        win(`SUM(${x})`, `__l${k}`);
        aggs.push(`SUM(${x}) AS __s${k}`);
        carried.push(`SUM(__s${k}) OVER pw AS __os${k}`);
        res = sumOf(`__l${k}`, `__os${k}`);
        break;
      case 'avg':
        win(`SUM(${x})`, `__l${k}`);
        win(`COUNT(${x})`, `__m${k}`);
        aggs.push(`SUM(${x}) AS __s${k}`, `COUNT(${x}) AS __c${k}`);
        carried.push(`SUM(__s${k}) OVER pw AS __os${k}`, `SUM(__c${k}) OVER pw AS __oc${k}`);
        res = `CAST(${sumOf(`__l${k}`, `__os${k}`)} AS DOUBLE) / NULLIF(__m${k} + coalesce(__oc${k}, 0), 0)`;
        break;
      default: {
        // min, max: the least/greatest of the piece's and the pieces' before it (nulls skipped)
        const fn = f.fn.toUpperCase();
        win(`${fn}(${x})`, `__l${k}`);
        aggs.push(`${fn}(${x}) AS __x${k}`);
        carried.push(`${fn}(__x${k}) OVER pw AS __ox${k}`);
        res = `${f.fn === 'min' ? 'least' : 'greatest'}(__l${k}, __ox${k})`;
      }
    }
    out.push(`CAST(${res} AS ${sparkType(f.type)}) AS ${col(w + k)}`);
  });
  const totals =
    `SELECT __hk AS __ohk, __pc AS __opc, ${carried.join(', ')} FROM (` +
    `SELECT __hk, __pc, ${aggs.join(', ')} FROM ${tagged} t WHERE __hk IS NOT NULL GROUP BY __hk, __pc) t ` +
    'WINDOW pw AS (PARTITION BY __hk ORDER BY __pc ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)';
  const first = `SELECT *, ${pass1.join(', ')} FROM ${tagged} t`;
  const joined =
    `SELECT /*+ BROADCAST(o) */ * FROM (${first}) b LEFT OUTER JOIN (${totals}) o ` +
    'ON b.__hk = o.__ohk AND b.__pc = o.__opc';
  const cols = Array.from({ length: w }, (_, i) => col(i));
  return `SELECT ${[...cols, ...out].join(', ')} FROM (${joined}) t`;
}
