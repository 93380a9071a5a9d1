// `--engine spark`: lower the bound plan, find and salt the hot keys AQE cannot
// split, run the SQL through Spark Connect and turn its Arrow batches into the
// engine's result (so every output format and the library work as for the local engine).
import * as arrow from 'apache-arrow';
import { ExecutionError, InputError, PlanError, SkewjoinError } from '../errors.js';
import { type Batch, type DataType, type Field, rowCount } from '../kernels/column.js';
import { batchesFromArrow } from '../io/arrow.js';
import type { ResultFile } from '../io/result-file.js';
import { type LoadOptions, type LoadedPlan, loadPlan } from '../plan/load.js';
import type { Plan } from '../plan/spec.js';
import type { SparkSources } from '../plan/uri.js';
import type { FileColumn } from '../io/parquet.js';
import { fromArrowType } from '../io/arrow.js';
import { ident } from './lower-expr.js';
import type { Executed } from '../scheduler/execute.js';
import type { OnProgress } from '../scheduler/progress.js';
import { type Stats, emptyStats } from '../physical/stats.js';
import { onClosePool } from '../runtime/pool.js';
import { type SparkSource, SparkConnectClient, SparkError } from './client.js';
import { isLoopback, parseRemote, redact } from './remote.js';
import type { RetryPolicy } from './retry.js';
import { type JoinDecision, type SamplingStat, planSalting } from './hot.js';
import { CORE_SETTINGS, clusterCores } from './decide.js';
import { SPARK_PARTITIONS } from './sample.js';
import { type Lowered, Lowering, lowerPlan } from './lower.js';
import { type WindowSamplingStat, planWindowSplits } from './window-split.js';
import { LocalSparkServer } from './server.js';
import { type StageTimes, stageTimes } from './stages.js';

export interface SparkStats extends Stats {
  engine: 'spark';
  spark: {
    sql: string;
    settings: Record<string, string>;
    applicationId: string;
    remote: string;
    salted: Lowered['salted'];
    /** the server restarts the query survived (run again on a new session, before any row came back) */
    restarts?: string[];
    /** per join with hot keys: salted or AQE alone (skew.strategy auto decides, decide.ts), and why */
    decisions?: JoinDecision[];
    /** the windows whose hot partitions are split in two passes (window.ts) */
    splitWindows: Lowered['splitWindows'];
    /** per window that could be split: how its partition keys were sampled */
    windowSampling?: WindowSamplingStat[];
    /** the sampling of the join sides that looked for hot keys (part of wallMs) */
    samplingMs?: number;
    /** per join side that could be salted: how it was sampled, what it read, what it found */
    sampling?: SamplingStat[];
    stages: StageTimes[];
    /** the sources of many files, each one DataSource named in the SQL */
    sources: Lowered['sources'];
    /** Spark's physical plan of the query (AnalyzePlan explain), when asked for (`explain`) */
    physicalPlan?: string;
  };
}

export interface SparkOptions {
  /** sc://host:port[/;token=...]; default SPARK_REMOTE, else a local server from the installed pyspark */
  remote?: string;
  onProgress?: OnProgress;
  keepBatches?: boolean;
  writeOut?: boolean;
  /** ask Spark for its physical plan of the query (stats.spark.physicalPlan) */
  explain?: boolean;
  /** a URI output folder that holds files is replaced (INSERT OVERWRITE DIRECTORY); without it, refused */
  replaceOutput?: boolean;
  /** each stage's task run times in stats.spark.stages[].durations (the bench's simulation) */
  taskTimes?: boolean;
  /** the cores Spark runs tasks on, for skew.strategy auto's choice (default: SKEWJOIN_SPARK_CORES, else the server's settings) */
  cores?: number;
  /** retries of a call that fails with a transient code: count and total time (retry.ts) */
  retry?: Partial<Pick<RetryPolicy, 'retries' | 'totalMs'>>;
}

/** The local server of this process (kept until closePool), and the sessions open on any server. */
let local: LocalSparkServer | null = null;
const clients = new Set<SparkConnectClient>();

async function closeSpark(): Promise<void> {
  const open = [...clients];
  clients.clear();
  await Promise.all(
    open.map(async (c) => {
      if (c.busy) await c.interrupt();
      await c.close();
    }),
  );
  const s = local;
  local = null;
  await s?.stop();
}

/** The local server being started: callers at the same time wait for one server. */
let starting: Promise<LocalSparkServer> | null = null;

async function localServer(workers: number): Promise<LocalSparkServer> {
  if (starting) await starting.catch(() => undefined);
  if (local && local.workers !== workers) {
    await local.stop();
    local = null;
  }
  if (!local) {
    starting = LocalSparkServer.start(workers);
    try {
      local = await starting;
    } finally {
      starting = null;
    }
  }
  return local;
}

async function connect(
  remote: string | undefined,
  workers: number,
  retry?: SparkOptions['retry'],
): Promise<{ client: SparkConnectClient; uiUrl?: string }> {
  let url = remote ?? process.env.SPARK_REMOTE;
  let uiUrl: string | undefined;
  // the URL is checked (a token only over TLS) before a local server starts
  let parsed = url ? parseRemote(url, remote ? '--remote' : 'SPARK_REMOTE') : undefined;
  if (!parsed) {
    const server = await localServer(workers);
    url = server.url;
    uiUrl = server.uiUrl;
    parsed = parseRemote(url);
  }
  const client = new SparkConnectClient(parsed, retry);
  clients.add(client);
  onClosePool(closeSpark);
  return { client, uiUrl };
}

/** A run's session released and its channel closed (the local server stays, until closePool). */
async function release(client: SparkConnectClient): Promise<void> {
  clients.delete(client);
  await client.close();
}

/** Why a local path cannot be given to the server at `url`, or undefined when it can (a server on this machine). */
function localFilesRefused(url: string | undefined, at: string): string | undefined {
  if (!url) return undefined;
  const r = parseRemote(url, at);
  if (isLoopback(r.host)) return undefined;
  return (
    `the Spark Connect server at ${r.host}:${r.port} runs on another machine and cannot read this machine's ` +
    'files; give a URI it reads (s3a://, gs://, abfss://, hdfs://, or file:///path for a folder every node of ' +
    'the cluster mounts), or run with --engine local'
  );
}

/**
 * Load and bind a plan for Spark: a source Spark reads itself (a URI, a glob of them, a
 * local path not found here) is bound from the schema Spark gives it (a `LIMIT 0` query
 * over it: its Arrow schema), through one session closed when the plan is bound.
 */
export async function loadForSpark(plan: Plan | string | object, o: LoadOptions, remote?: string): Promise<LoadedPlan> {
  let session: Promise<SparkConnectClient> | null = null;
  const schema: SparkSources['schema'] = async (uri, workers) => {
    session ??= connect(remote, workers).then(async ({ client }) => {
      // column names as they are; timestamps with a time zone as UTC ones (the run's settings)
      await client.setConfig({ 'spark.sql.caseSensitive': 'true', 'spark.sql.session.timeZone': 'UTC' });
      return client;
    });
    try {
      const client = await session;
      let fields: FileColumn[] | null = null;
      await client.execute(`SELECT * FROM parquet.${ident(uri)} LIMIT 0`, (ev) => {
        if (ev.kind === 'arrow' && !fields)
          fields = arrow
            .tableFromIPC(ev.data)
            .schema.fields.map((f) => ({ name: f.name, type: fromArrowType(f.type) }));
      });
      if (!fields) throw new ExecutionError(`spark: no schema came back for ${uri}`);
      return fields;
    } catch (e) {
      throw mapSparkError(e);
    }
  };
  try {
    // a local path not found here may be found by a remote server on this machine, not by a local one; a server
    // on another machine reads no local path (nor a file of that name there, after we sampled ours)
    const url = remote ?? process.env.SPARK_REMOTE;
    const localRefused = localFilesRefused(url, remote ? '--remote' : 'SPARK_REMOTE');
    return await loadPlan(plan, { ...o, sparkSources: { schema, missing: !!url, localRefused } });
  } finally {
    if (session) {
      const client = await (session as Promise<SparkConnectClient>).catch(() => null);
      if (client) await release(client);
    }
  }
}

/** Our error for a Spark one: analysis -> plan error (exit 2), bad data -> input error (exit 3), else exit 1. */
export function mapSparkError(e: unknown): SkewjoinError {
  if (e instanceof SkewjoinError) return e;
  if (!(e instanceof SparkError)) return new ExecutionError(redact(`spark: ${(e as Error)?.message ?? e}`));
  const first = redact(e.message.split('\n')[0]);
  if (/CAST_INVALID_INPUT|CAST_OVERFLOW|FAILED_READ_FILE|PATH_NOT_FOUND|CANNOT_READ_FILE|PARQUET/.test(e.errorClass))
    return new InputError(`spark: ${first}`);
  // a value the lowered SQL refuses as ours does (lower-expr.ts: raise_error('value "x" cannot be cast to t'))
  if (e.errorClass === 'USER_RAISED_EXCEPTION' && /cannot be cast to/.test(first))
    return new InputError(`spark: ${first}`);
  if (e.analysis)
    return new PlanError(
      'query',
      `Spark cannot analyze the lowered SQL${e.fragment ? ` at "${e.fragment}"` : ''}: ${first}`,
    );
  return new ExecutionError(`spark: ${first}`);
}

/** What `--explain --engine spark` and `lower --to spark` print: the SQL, the settings, the salted keys. */
export async function lowerWithSalting(
  lp: LoadedPlan,
  remote?: string,
  cores?: number,
): Promise<
  Lowered & {
    sampling: SamplingStat[];
    decisions: JoinDecision[];
    windowSampling: WindowSamplingStat[];
    physicalPlan: string;
  }
> {
  const { settings, sources } = lowerPlan(lp); // refusals first, before a server is started or reached
  const { client } = await connect(remote, lp.settings.workers);
  try {
    await client.setConfig(settings); // the sampling queries run under the plan's settings
    const conf = await client.getConfig(['spark.sql.shuffle.partitions', ...CORE_SETTINGS]);
    const query = (sql: string) => queryRows(client, sql, sources);
    const partitions = serverPartitions(lp, conf);
    const { plans, sampling, decisions } = await planSalting(
      lp,
      query,
      partitions,
      clusterCores(conf, givenCores(cores)),
    );
    const windows = await planWindowSplits(lp, query, new Lowering(lp.root), partitions);
    const lowered = lowerPlan(lp, plans, windows.splits);
    const physicalPlan = await client.explain(lowered.query, lowered.sources);
    return { ...lowered, sampling, decisions, windowSampling: windows.sampling, physicalPlan };
  } catch (e) {
    throw mapSparkError(e);
  } finally {
    await release(client);
  }
}

/** The cores given for the run: the option, else SKEWJOIN_SPARK_CORES; undefined when neither (the server's settings say). */
function givenCores(cores?: number): number | undefined {
  const env = Number(process.env.SKEWJOIN_SPARK_CORES);
  return cores ?? (Number.isInteger(env) && env > 0 ? env : undefined);
}

/** The shuffle partitions of the run: the plan's, else the server's spark.sql.shuffle.partitions, else Spark's 200. */
function serverPartitions(lp: LoadedPlan, conf: Map<string, string>): number {
  const n = Number(conf.get('spark.sql.shuffle.partitions'));
  return lp.settings.partitions ?? (Number.isInteger(n) && n > 0 ? n : SPARK_PARTITIONS);
}

/** The rows of a Spark SQL query over the lowered sources, as arrays of values (sampling queries). */
export async function queryRows(client: SparkConnectClient, sql: string, sources: SparkSource[]): Promise<unknown[][]> {
  const rows: unknown[][] = [];
  await client.execute(
    sql,
    (ev) => {
      if (ev.kind !== 'arrow') return;
      for (const r of arrow.tableFromIPC(ev.data)) rows.push(r ? [...Object.values(r.toJSON())] : []);
    },
    { sources },
  );
  return rows;
}

/**
 * A URI output folder that holds files is refused unless asked to replace (INSERT OVERWRITE DIRECTORY wipes it):
 * Spark lists it (binaryFile, its files' names only); a folder not there is a new one.
 */
async function checkOutputFolder(client: SparkConnectClient, uri: string): Promise<void> {
  let rows: unknown[][];
  try {
    rows = await queryRows(client, `SELECT path FROM binaryFile.${ident(uri)} LIMIT 1`, []);
  } catch (e) {
    if (e instanceof SparkError && /PATH_NOT_FOUND|FileNotFound/i.test(`${e.errorClass} ${e.message}`)) return;
    throw e;
  }
  if (rows.length > 0)
    throw new PlanError(
      'output.path',
      `${uri} holds files (${String(rows[0][0])}), which Spark's INSERT OVERWRITE DIRECTORY would delete; ` +
        'give an empty or new folder, or --replace-output (options.replaceOutput) to replace its contents',
    );
}

/** The type a Spark result column comes back as: unsigned integers widened, timestamps in microseconds. */
function resultType(t: DataType): DataType {
  const wide: Partial<Record<DataType['id'], DataType>> = {
    uint8: { id: 'int16' },
    uint16: { id: 'int32' },
    uint32: { id: 'int64' },
    uint64: { id: 'decimal', precision: 20, scale: 0 },
  };
  if (t.id === 'timestamp') return { id: 'timestamp', unit: 'microsecond', tz: t.tz ? 'UTC' : null };
  return wide[t.id] ?? t;
}

export async function executeOnSpark(lp: LoadedPlan, o: SparkOptions = {}): Promise<Executed & { stats: SparkStats }> {
  const t0 = performance.now();
  const schema: Field[] = lp.root.schema.map((f) => ({ name: f.name, type: resultType(f.type) }));
  // a construct Spark cannot run is refused before a server is started or reached
  const { settings, sources } = lowerPlan(lp);
  const { client, uiUrl } = await connect(o.remote, lp.settings.workers, o.retry);
  let file: ResultFile | null = null;
  try {
    await client.setConfig(settings);
    const conf = await client.getConfig([
      'spark.app.id',
      'spark.ui.port',
      'spark.sql.shuffle.partitions',
      ...CORE_SETTINGS,
    ]);
    const ts = performance.now();
    const query = (sql: string) => queryRows(client, sql, sources);
    const partitions = serverPartitions(lp, conf);
    const { plans, sampling, decisions } = await planSalting(
      lp,
      query,
      partitions,
      clusterCores(conf, givenCores(o.cores)),
    );
    const windows = await planWindowSplits(lp, query, new Lowering(lp.root), partitions);
    const samplingMs = performance.now() - ts;
    const lowered = lowerPlan(lp, plans, windows.splits);
    if (lowered.writeUri && !o.replaceOutput && (o.writeOut ?? true)) await checkOutputFolder(client, lowered.writeUri);
    const physicalPlan = o.explain ? await client.explain(lowered.query, lowered.sources) : undefined;
    const batches: Batch[] = [];
    let numRows = 0;
    const toFile = lp.output && (o.writeOut ?? true) && !lowered.writeUri;
    if (toFile)
      file = await (await import('../io/result-file.js')).ResultFile.open(lp.output!.path, lp.output!.format, schema);
    const keep = o.keepBatches ?? true;
    const progress = new Map<number, { tasks: number; done: number }>();
    const shown = { fraction: 0 };
    const restarts: string[] = [];
    const run = () =>
      client.execute(
        lowered.sql,
        async (ev) => {
          if (ev.kind === 'progress') {
            for (const s of ev.stages) progress.set(s.id, { tasks: s.tasks, done: s.done });
            reportProgress(o.onProgress, progress, t0, shown);
            return;
          }
          const table = arrow.tableFromIPC(ev.data);
          const bs = batchesFromArrow(table, schema).filter((b) => b.length > 0);
          numRows += rowCount(bs);
          if (keep) batches.push(...bs);
          if (file) await file.write(bs);
        },
        { command: !!lowered.writeUri, sources: lowered.sources },
      );
    for (;;) {
      try {
        await run();
        break;
      } catch (e) {
        // a server restarted before any row came back: the query again on a new session, its settings pinned again
        if (!restartedBeforeRows(e, numRows, restarts)) throw e;
        restarts.push((e as Error).message);
        progress.clear();
        client.renewSession();
        await client.setConfig(settings);
        // the new server's application and UI (its stages)
        for (const [k, v] of await client.getConfig(['spark.app.id', 'spark.ui.port'])) conf.set(k, v);
      }
    }
    await file?.finish();
    const stats = sparkStats(
      lowered,
      conf.get('spark.app.id') ?? '',
      client.remote.url,
      performance.now() - t0,
      numRows,
    );
    stats.spark.samplingMs = samplingMs;
    stats.spark.sampling = sampling;
    stats.spark.decisions = decisions;
    if (restarts.length) stats.spark.restarts = restarts;
    stats.spark.windowSampling = windows.sampling;
    if (physicalPlan !== undefined) stats.spark.physicalPlan = physicalPlan;
    // a remote driver's REST API, where its UI port is set and reachable from here
    const restUrl =
      uiUrl ?? (conf.get('spark.ui.port') ? `http://${client.remote.host}:${conf.get('spark.ui.port')}` : undefined);
    stats.spark.stages = await stageTimes(restUrl, stats.spark.applicationId, [...progress.keys()], o.taskTimes);
    reportProgress(o.onProgress, progress, t0, shown, 'done');
    return { schema, batches, numRows, stats, outputPath: file?.file ?? lowered.writeUri };
  } catch (e) {
    file?.abort();
    throw mapSparkError(e);
  } finally {
    await release(client);
  }
}

/** Restarts a query survives by running again (each one before any row came back). */
const RESTARTS = 2;

/**
 * Whether a query may run again after `e`: the server restarted (its session and settings gone, SESSION_CHANGED)
 * before any row came back (so none is written twice), fewer than RESTARTS times.
 */
function restartedBeforeRows(e: unknown, rows: number, restarts: string[]): boolean {
  return e instanceof SparkError && e.errorClass === 'SESSION_CHANGED' && rows === 0 && restarts.length < RESTARTS;
}

/** The engine's progress events from Spark's stages: the fraction never goes back, and is 1 only at the end. */
function reportProgress(
  on: OnProgress | undefined,
  stages: Map<number, { tasks: number; done: number }>,
  t0: number,
  shown: { fraction: number },
  stage?: string,
) {
  if (!on) return;
  let tasksDone = 0,
    tasksTotal = 0;
  for (const s of stages.values()) {
    tasksDone += s.done;
    tasksTotal += s.tasks;
  }
  const running = [...stages.entries()]
    .filter(([, s]) => s.done < s.tasks)
    .map(([id, s]) => ({ stage: `spark stage ${id}`, tasksDone: s.done, tasksTotal: s.tasks }));
  // Spark adds stages as it goes: a share of the tasks known so far, held below 1 until the end
  const share = stage === 'done' ? 1 : Math.min(0.99, tasksTotal > 0 ? tasksDone / tasksTotal : 0);
  shown.fraction = Math.max(shown.fraction, share);
  on({
    stage: stage ?? running[0]?.stage ?? `spark stage ${[...stages.keys()].pop() ?? 0}`,
    tasksDone,
    tasksTotal,
    fraction: shown.fraction,
    running,
    rowsRead: 0,
    bytesShuffled: 0,
    bytesSpilled: 0,
    elapsedMs: performance.now() - t0,
  });
}

function sparkStats(l: Lowered, applicationId: string, remote: string, wallMs: number, outputRows: number): SparkStats {
  return {
    ...emptyStats(wallMs),
    outputRows,
    engine: 'spark',
    spark: {
      sql: l.sql,
      settings: l.settings,
      applicationId,
      remote: redact(remote),
      salted: l.salted,
      splitWindows: l.splitWindows,
      sources: l.sources,
      stages: [],
    },
  };
}
