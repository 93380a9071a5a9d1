// Lowering a bound plan to one Spark SQL query and the session settings that go
// with it. Every operator becomes a SELECT whose columns carry the plan's names where
// they are plain identifiers that clash with nothing, else their position (__sj0, __sj1,
// ...; Lowering.names); the outermost SELECT gives them the plan's names.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PlanError } from '../errors.js';
import { AGGREGATES } from '../agg/functions.js';
import { typeName } from '../kernels/column.js';
import { FORMATS } from '../io/result-file.js';
import { OUTPUT_FORMATS } from '../plan/formats.js';
import { isUri } from '../plan/uri.js';
import type { BoundNode } from '../plan/bound.js';
import type { LoadedPlan, Settings } from '../plan/load.js';
import { SQL_SETTINGS, alias, col, expr, ident, predicate, str, withColumns } from './lower-expr.js';
import { type SaltPlan, plainJoin, saltedJoin } from './salt.js';
import type { SparkSource } from './client.js';
import { lowerSetOp } from './setops.js';
import { type SplitWindowStat, type WindowSplit, lowerWindow, splitStat } from './window.js';

export interface Lowered {
  sql: string;
  settings: Record<string, string>;
  /** the joins rewritten with salting, by operator id */
  salted: { join: string; side: 'left' | 'right'; keys: string[][]; buckets: number }[];
  /** the windows whose hot partitions are split (window.ts) */
  splitWindows: SplitWindowStat[];
  /** an output.path that is a URI: Spark writes it (`INSERT OVERWRITE DIRECTORY`) */
  writeUri?: string;
  /** the query alone (without the write): what Spark's plan is asked of (AnalyzePlan explain) */
  query: string;
  /** the sources of many files, each one DataSource of its paths, named in the SQL by its alias */
  sources: SparkSource[];
}

/** A local file as Spark reads it from a local server: an absolute file: URI. */
const sparkPath = (p: string) => (isUri(p) ? p : pathToFileURL(path.resolve(p)).href);

/** The session settings: ANSI SQL, UTC, exact decimals, and AQE from the plan's execution settings. */
function sparkSettings(s: Settings): Record<string, string> {
  const out: Record<string, string> = {
    ...SQL_SETTINGS, // the meaning of the SQL: ANSI, UTC, exact decimals, ... (lower-expr.ts)
    'spark.sql.adaptive.enabled': 'true',
    'spark.sql.adaptive.skewJoin.enabled': String(s.skew.enabled),
    'spark.sql.adaptive.skewJoin.skewedPartitionFactor': String(s.skew.factor),
    'spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes': String(s.skew.thresholdBytes),
    'spark.sql.adaptive.advisoryPartitionSizeInBytes': String(s.skew.advisoryPartitionBytes),
    'spark.sql.autoBroadcastJoinThreshold': String(s.broadcastBytes > 0 ? s.broadcastBytes : -1),
    'spark.sql.adaptive.autoBroadcastJoinThreshold': String(s.broadcastBytes > 0 ? s.broadcastBytes : -1),
  };
  if (s.partitions !== undefined) out['spark.sql.shuffle.partitions'] = String(s.partitions);
  return out;
}

/**
 * The scans of many files, each as one DataSource of its paths (a list Spark reads as one
 * relation, unlike a UNION ALL of one branch per file), named __sj_src0.. in plan order.
 */
function sparkSources(root: BoundNode): Map<string, SparkSource> {
  const out = new Map<string, SparkSource>();
  const walk = (n: BoundNode) => {
    if (n.kind === 'scan') {
      const paths = [...new Set(n.splits.map((s) => sparkPath(s.path)))];
      const key = JSON.stringify(paths);
      if (paths.length > 1 && !out.has(key)) out.set(key, { alias: `__sj_src${out.size}`, paths });
    } else if (n.kind === 'join') {
      walk(n.left);
      walk(n.right);
    } else if (n.kind === 'union') n.inputs.forEach(walk);
    else if ('input' in n) walk(n.input);
  };
  walk(root);
  return out;
}

/** The JSON path of each bound node (compute nodes stand at their operator's path). */
function paths(root: BoundNode): Map<BoundNode, string> {
  const m = new Map<BoundNode, string>();
  const walk = (n: BoundNode, at: string) => {
    m.set(n, at);
    if (n.kind === 'join') {
      walk(n.left, `${at}.left`);
      walk(n.right, `${at}.right`);
      return;
    }
    if (n.kind === 'union') n.inputs.forEach((c, i) => walk(c, `${at}.inputs[${i}]`));
    if ('input' in n) walk(n.input, n.kind === 'compute' ? at : `${at}.input`);
  };
  walk(root, 'query');
  return m;
}

/** A plan name usable as is in the SQL: a plain identifier, none of ours (`__`), no keyword nor alias of ours. */
const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = new Set(
  (
    'all and any anti array as asc between both by case cast cross cube current current_date current_time ' +
    'current_timestamp current_user date day desc directory distinct div else end escape except exists false ' +
    'fetch filter first following for from full group grouping having hour if in inner insert intersect interval ' +
    'into is join last lateral left like limit map minute month natural not null nulls of offset on or order ' +
    'outer over overwrite partition preceding range right rlike rollup row rows second select semi sets some ' +
    'struct table then timestamp to true unbounded union unknown using values view when where window with year ' +
    'l r t j s'
  ).split(' '),
);

/** Names for `fields` (columns from `start` on), the plan's where plain and not taken (case aside), else __sjN. */
function fresh(fields: readonly { name: string }[], start: number, taken: readonly string[]): string[] {
  const used = new Set(taken.map((x) => x.toLowerCase()));
  return fields.map((f, k) => {
    const lc = f.name.toLowerCase();
    const ok = PLAIN.test(f.name) && !f.name.startsWith('__') && !RESERVED.has(lc) && !used.has(lc);
    const name = ok ? f.name : `__sj${start + k}`;
    used.add(name.toLowerCase());
    return name;
  });
}

const positional = (ns: readonly string[]) => ns.every((x, i) => x === `__sj${i}`);
/** `c AS name`, or `c` alone when it already has that name. */

export class Lowering {
  private readonly at: Map<BoundNode, string>;
  readonly sources: Map<string, SparkSource>;
  readonly salted: Lowered['salted'] = [];
  readonly splitWindows: SplitWindowStat[] = [];

  constructor(
    readonly root: BoundNode,
    readonly salt: Map<string, SaltPlan> = new Map(),
    readonly windows: Map<string, WindowSplit> = new Map(),
  ) {
    this.at = paths(root);
    this.sources = sparkSources(root);
  }

  private readonly nameMemo = new Map<BoundNode, string[]>();

  /**
   * The names of a node's columns in the SQL: a node that keeps its input's columns (filter, sort, limit, and
   * compute, which adds some) keeps their names (a window's are positional, as window.ts lowers it), so that `col` names them alike in the node and its
   * input; the others name theirs afresh (fresh).
   */
  names(n: BoundNode): string[] {
    let ns = this.nameMemo.get(n);
    if (ns) return ns;
    switch (n.kind) {
      case 'filter':
      case 'sort':
      case 'limit':
        ns = this.names(n.input);
        break;
      case 'repeat':
        ns = this.names(n.input).slice(0, n.schema.length);
        break;
      case 'window':
        ns = n.schema.map((_, i) => `__sj${i}`);
        break;
      case 'compute': {
        const base = this.names(n.input);
        ns = [...base, ...fresh(n.schema.slice(base.length), base.length, base)];
        break;
      }
      default:
        ns = fresh(n.schema, 0, []);
    }
    this.nameMemo.set(n, ns);
    return ns;
  }

  /**
   * A node as a SELECT whose columns are __sj0.. in the order of its schema, as `col` names them outside a
   * node's lowering (the sampling queries, the salted join, window.ts).
   */
  node(n: BoundNode): string {
    const ns = this.names(n);
    if (positional(ns)) return this.named(n);
    return `SELECT ${ns.map((c, i) => alias(c, `__sj${i}`)).join(', ')} FROM (${this.named(n)}) t`;
  }

  /** A node as a SELECT whose columns are named by names(n), in the order of its schema. */
  named(n: BoundNode): string {
    const from = (m: BoundNode) => `(${this.named(m)}) t`;
    const own = <T>(f: () => T) => withColumns(this.names(n), f);
    switch (n.kind) {
      case 'scan':
        return this.scan(n);
      case 'filter':
        return own(
          () =>
            `SELECT * FROM ${from(n.input)} WHERE ${predicate(
              n.pred,
              n.input.schema.map((f) => f.type),
            )}`,
        );
      case 'project': {
        const [inn, out] = [this.names(n.input), this.names(n)];
        return `SELECT ${n.indices.map((j, i) => alias(inn[j], out[i])).join(', ')} FROM ${from(n.input)}`;
      }
      case 'compute': {
        const base = n.input.schema.length;
        return own(
          () => `SELECT *, ${n.exprs.map((e, k) => `${expr(e)} AS ${col(base + k)}`).join(', ')} FROM ${from(n.input)}`,
        );
      }
      case 'join':
        return this.join(n);
      case 'aggregate':
        return this.aggregate(n);
      case 'sort':
        return own(() => `SELECT * FROM ${from(n.input)} ${orderBy(n)}`);
      case 'limit': {
        const page = `LIMIT ${n.count}${n.offset ? ` OFFSET ${n.offset}` : ''}`;
        // sort and limit in one SELECT: the limit takes the first rows of that order
        if (n.input.kind === 'sort') {
          const sort = n.input;
          return own(() => `SELECT * FROM ${from(sort.input)} ${orderBy(sort)} ${page}`);
        }
        return `SELECT * FROM ${from(n.input)} ${page}`;
      }
      case 'window': {
        const split = this.windows.get(n.id);
        if (split) this.splitWindows.push(splitStat(n, split));
        // window.ts lowers over positional columns (names: a window's are positional)
        return withColumns(null, () => lowerWindow(n, (m) => this.node(m), split));
      }
      case 'union':
      case 'values':
      case 'expand':
      case 'repeat':
        return lowerSetOp(
          n,
          (m) => this.named(m),
          (m) => this.names(m),
        );
    }
  }

  private scan(n: Extract<BoundNode, { kind: 'scan' }>): string {
    if (n.splits.some((s) => s.csv)) {
      throw new PlanError(
        `${this.at.get(n)}.source`,
        `source "${n.source}" is read as CSV, which --engine spark does not lower yet; run with --engine local`,
      );
    }
    n.schema.forEach((f, i) => {
      if (f.type.id === 'timestamp' && f.type.unit === 'nanosecond') {
        throw new PlanError(
          `${this.at.get(n)}.columns[${i}]`,
          `column "${f.name}" is a nanosecond timestamp, which Spark does not read from Parquet; ` +
            'run with --engine local',
        );
      }
    });
    const files = [...new Set(n.splits.map((s) => sparkPath(s.path)))];
    const out = this.names(n);
    const cols = n.schema.map((f, i) => (out[i] === f.name ? f.name : `${ident(f.name)} AS ${out[i]}`)).join(', ');
    const many = this.sources.get(JSON.stringify(files));
    return `SELECT ${cols} FROM ${many ? many.alias : `parquet.${ident(files[0])}`}`;
  }

  private join(n: Extract<BoundNode, { kind: 'join' }>): string {
    const plan = this.salt.get(n.id);
    if (plan) {
      this.salted.push({ join: n.id, side: plan.side, keys: plan.keys.map((k) => k.text), buckets: plan.buckets });
      // the salted join over positional columns (salt.ts), then the join's own names
      const salted = withColumns(null, () => saltedJoin(n, plan, (m) => this.node(m)));
      const out = this.names(n);
      if (positional(out)) return salted;
      return `SELECT ${out.map((c, i) => alias(`__sj${i}`, c)).join(', ')} FROM (${salted}) t`;
    }
    return plainJoin(n, `(${this.named(n.left)})`, `(${this.named(n.right)})`, n.type, {
      names: { left: this.names(n.left), right: this.names(n.right), out: this.names(n) },
    });
  }

  private aggregate(n: Extract<BoundNode, { kind: 'aggregate' }>): string {
    const [inn, out] = [this.names(n.input), this.names(n)];
    const groups = n.groupBy.map((g, i) => alias(inn[g], out[i]));
    const aggs = n.aggs.map((a, k) => {
      const input = n.input.schema[a.col]?.type;
      const text = AGGREGATES[a.fn].spark(a.col < 0 ? col(a.col) : inn[a.col], a, input);
      if (text === null)
        throw new PlanError(
          `${this.at.get(n)}.aggregates[${k}]`,
          `${a.fn} of a ${input ? typeName(input) : 'missing'} column has no exact Spark lowering; run with --engine local`,
        );
      return `${text} AS ${out[n.groupBy.length + k]}`;
    });
    const by = n.groupBy.length ? ` GROUP BY ${n.groupBy.map((g) => inn[g]).join(', ')}` : '';
    return `SELECT ${[...groups, ...aggs].join(', ')} FROM (${this.named(n.input)}) t${by}`;
  }
}

function orderBy(n: Extract<BoundNode, { kind: 'sort' }>): string {
  return (
    'ORDER BY ' +
    n.by.map((k) => `${col(k.col)} ${k.desc ? 'DESC' : 'ASC'} NULLS ${k.nullsFirst ? 'FIRST' : 'LAST'}`).join(', ')
  );
}

/** The whole plan: the query with the plan's column names, and its settings. */
export function lowerPlan(
  lp: LoadedPlan,
  salt: Map<string, SaltPlan> = new Map(),
  windows: Map<string, WindowSplit> = new Map(),
): Lowered {
  const l = new Lowering(lp.root, salt, windows);
  const body = l.named(lp.root);
  const inner = l.names(lp.root);
  const names = lp.root.schema
    .map((f, i) => (inner[i] === f.name ? f.name : `${inner[i]} AS ${ident(f.name)}`))
    .join(', ');
  const query = `SELECT ${names} FROM (${body}) t`;
  let sql = query;
  const raw = lp.plan.output?.path;
  let writeUri: string | undefined;
  if (raw && isUri(raw)) {
    const fmt = lp.output!.format;
    const spark = FORMATS[fmt].spark;
    if (spark === null)
      throw new PlanError(
        'output.format',
        `Spark does not write ${fmt} output; use ${OUTPUT_FORMATS.filter((f) => FORMATS[f].spark).join(', ')} for a URI output.path`,
      );
    const options = spark.options ? ` OPTIONS (${spark.options})` : '';
    sql = `INSERT OVERWRITE DIRECTORY ${str(raw)} USING ${spark.using}${options} ${sql}`;
    writeUri = raw;
  }
  return {
    sql,
    settings: sparkSettings(lp.settings),
    salted: l.salted,
    splitWindows: l.splitWindows,
    writeUri,
    query,
    sources: [...l.sources.values()],
  };
}
