// Text of plan pieces for `--explain`: literals, predicates, the row operators fused into a pipeline, byte sizes.
import { type DataType, type Field, decimalText } from '../kernels/column.js';
import { exprText } from '../expr/columns.js';
import type { BoundNode, BoundPredicate, Literal } from '../plan/bound.js';
import type { Pipeline } from './pipeline.js';
import type { TaskStats } from './stats.js';

/** A filter's literal as it is written: dates and timestamps as such, not as the day or unit count held. */
function litText(v: Literal, t: DataType | undefined): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v !== null && typeof v === 'object') return decimalText(v.scaled, v.scale);
  if (v !== null && t && (t.id === 'date32' || t.id === 'timestamp'))
    return exprText({ k: 'lit', value: t.id === 'date32' ? Number(v) : BigInt(v), type: t }, []);
  return String(v);
}

function predText(p: BoundPredicate, fields: Field[]): string {
  const names = fields.map((f) => f.name);
  switch (p.kind) {
    case 'cmp':
      return `${names[p.col]} ${p.op} ${litText(p.value, fields[p.col]?.type)}`;
    case 'in':
      return `${names[p.col]} in (${p.values.map((v) => litText(v, fields[p.col]?.type)).join(', ')})`;
    case 'isNull':
      return `${names[p.col]} is ${p.isNull ? '' : 'not '}null`;
    case 'not':
      return `not (${predText(p.pred, fields)})`;
    case 'expr':
      return exprText(p.expr, names);
    default:
      return p.preds.map((q) => `(${predText(q, fields)})`).join(` ${p.kind} `);
  }
}

/** The columns seen by a fused operator: those of the node below it. */
function inputFields(top: BoundNode, id: string): Field[] {
  for (let n: BoundNode = top; ; ) {
    if (n.kind !== 'filter' && n.kind !== 'project' && n.kind !== 'compute') return n.schema;
    if (n.id === id) return n.input.schema;
    n = n.input;
  }
}

const inputNames = (top: BoundNode, id: string): string[] => inputFields(top, id).map((f) => f.name);

/** The row operators fused above a pipeline's source (` → filter-1[x > 1] → project-2[3 columns]`), or ''. */
export function fusedText(node: BoundNode, p: Pipeline): string {
  if (!p.ops.length) return '';
  const ops = p.fused.map((id, i) => {
    const op = p.ops[i];
    if (op.kind === 'filter') return `${id}[${predText(op.pred, inputFields(node, id))}]`;
    if (op.kind === 'compute') return `${id}[${op.exprs.map((e) => exprText(e, inputNames(node, id))).join(', ')}]`;
    if (op.kind === 'probe') return `${id}[probe broadcast table]`;
    if (op.kind === 'mark')
      return `${id}[${op.keep ? 'keep rows whose key the built left side has' : 'mark the built left rows matched'}]`;
    return `${id}[${p.schema.length} columns]`;
  });
  return ` → ${ops.join(' → ')}`;
}

export function fmtBytes(b: number): string {
  const u = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) {
    b /= 1024;
    i++;
  }
  return `${b < 10 && i > 0 ? b.toFixed(1) : Math.round(b)}${u[i]}`;
}

/** A size as people read it: 25165824 -> "24 MB", 100000 -> "97.7 KB", 101 -> "101 bytes". */
export function humanBytes(b: number): string {
  if (b < 1024) return `${b} bytes`;
  const u = ['KB', 'MB', 'GB', 'TB'];
  let i = -1;
  while (b >= 1024 && i < u.length - 1) {
    b /= 1024;
    i++;
  }
  const digits = b < 100 && !Number.isInteger(b) ? 1 : 0;
  return `${Number(b.toFixed(digits))} ${u[i]}`;
}

/** The byte counts of a decision's words (`N bytes`, `broadcastBytes N`, `bound N`) made human-readable. */
export function humanSizes(text: string): string {
  return text
    .replace(
      /\b(broadcastBytes|bound|left|right) (\d+)(?![\d.]| rows)( bytes\b)?/g,
      (_, w, n) => `${w} ${n === '0' ? 0 : humanBytes(+n)}`,
    )
    .replace(/\b(\d+) bytes\b/g, (_, n) => humanBytes(+n));
}

/**
 * What an operator's tasks did, as DuckDB's EXPLAIN ANALYZE shows it in the tree (the `ran:` line of `--explain
 * --analyze`, PhysicalOperator.ran): for each kind of task (map, split, reduce) the tasks, rows in and out, and their
 * time added up (the time of the threads that ran them, not the wall time).
 */
export function taskFigures(tasks: TaskStats[]): string {
  const kinds = new Map<string, { n: number; rows: number; out: number; ms: number }>();
  for (const t of tasks) {
    const k = kinds.get(t.kind) ?? { n: 0, rows: 0, out: 0, ms: 0 };
    kinds.set(t.kind, k);
    k.n++;
    k.rows += t.rows;
    k.out += t.outputRows;
    k.ms += t.ms;
  }
  const n = (x: number) => x.toLocaleString('en-US');
  const parts = [...kinds].map(
    ([kind, k]) => `${kind} ${k.n} task(s), ${n(k.rows)} → ${n(k.out)} rows, ${k.ms.toFixed(1)} ms`,
  );
  return `ran: ${parts.join('; ')}`;
}
