// Lowering a bound plan to one Spark SQL query and the session settings that go
// with it. Every operator becomes a SELECT whose columns are named by position
// (__sj0, __sj1, ...); the outermost SELECT gives them the plan's names.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PlanError } from '../errors.js';
import { AGGREGATES } from '../agg/functions.js';
import { typeName } from '../kernels/column.js';
import { FORMATS } from '../io/result-file.js';
import { OUTPUT_FORMATS } from '../plan/spec.js';
import { isUri } from '../plan/uri.js';
import type { BoundNode } from '../plan/bound.js';
import type { LoadedPlan, Settings } from '../plan/load.js';
import { SQL_SETTINGS, col, expr, ident, predicate, str } from './lower-expr.js';
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

  /** A node as a SELECT whose columns are __sj0.. in the order of its schema. */
  node(n: BoundNode): string {
    const from = (m: BoundNode) => `(${this.node(m)}) t`;
    switch (n.kind) {
      case 'scan':
        return this.scan(n);
      case 'filter':
        return `SELECT * FROM ${from(n.input)} WHERE ${predicate(
          n.pred,
          n.input.schema.map((f) => f.type),
        )}`;
      case 'project':
        return `SELECT ${n.indices.map((j, i) => `${col(j)} AS ${col(i)}`).join(', ')} FROM ${from(n.input)}`;
      case 'compute': {
        const base = n.input.schema.length;
        return `SELECT *, ${n.exprs.map((e, k) => `${expr(e)} AS ${col(base + k)}`).join(', ')} FROM ${from(n.input)}`;
      }
      case 'join':
        return this.join(n);
      case 'aggregate':
        return this.aggregate(n);
      case 'sort':
        return `SELECT * FROM ${from(n.input)} ${orderBy(n)}`;
      case 'limit': {
        const page = `LIMIT ${n.count}${n.offset ? ` OFFSET ${n.offset}` : ''}`;
        // sort and limit in one SELECT: the limit takes the first rows of that order
        if (n.input.kind === 'sort') return `SELECT * FROM ${from(n.input.input)} ${orderBy(n.input)} ${page}`;
        return `SELECT * FROM ${from(n.input)} ${page}`;
      }
      case 'window': {
        const split = this.windows.get(n.id);
        if (split) this.splitWindows.push(splitStat(n, split));
        return lowerWindow(n, (m) => this.node(m), split);
      }
      case 'union':
      case 'values':
      case 'expand':
      case 'repeat':
        return lowerSetOp(n, (m) => this.node(m));
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
    const cols = n.schema.map((f, i) => `${ident(f.name)} AS ${col(i)}`).join(', ');
    const many = this.sources.get(JSON.stringify(files));
    return `SELECT ${cols} FROM ${many ? many.alias : `parquet.${ident(files[0])}`}`;
  }

  private join(n: Extract<BoundNode, { kind: 'join' }>): string {
    const plan = this.salt.get(n.id);
    if (plan) {
      this.salted.push({ join: n.id, side: plan.side, keys: plan.keys.map((k) => k.text), buckets: plan.buckets });
      return saltedJoin(n, plan, (m) => this.node(m));
    }
    return plainJoin(n, `(${this.node(n.left)})`, `(${this.node(n.right)})`, n.type);
  }

  private aggregate(n: Extract<BoundNode, { kind: 'aggregate' }>): string {
    const groups = n.groupBy.map((g, i) => `${col(g)} AS ${col(i)}`);
    const aggs = n.aggs.map((a, k) => {
      const input = n.input.schema[a.col]?.type;
      const text = AGGREGATES[a.fn].spark(col(a.col), a, input);
      if (text === null)
        throw new PlanError(
          `${this.at.get(n)}.aggregates[${k}]`,
          `${a.fn} of a ${input ? typeName(input) : 'missing'} column has no exact Spark lowering; run with --engine local`,
        );
      return `${text} AS ${col(n.groupBy.length + k)}`;
    });
    const by = n.groupBy.length ? ` GROUP BY ${n.groupBy.map(col).join(', ')}` : '';
    return `SELECT ${[...groups, ...aggs].join(', ')} FROM (${this.node(n.input)}) t${by}`;
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
  const body = l.node(lp.root);
  const names = lp.root.schema.map((f, i) => `${col(i)} AS ${ident(f.name)}`).join(', ');
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
