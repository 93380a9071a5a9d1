// A small Spark Connect client over gRPC: one session, Config, AnalyzePlan (explain),
// reattachable ExecutePlan of SQL (results as Arrow IPC batches), Interrupt, ReleaseSession,
// and errors read through FetchErrorDetails. As the official clients do, a call that fails
// with a transient code is retried with exponential backoff and jitter (retry.ts), a dropped
// result stream is resumed by ReattachExecute from the last response received, responses
// consumed are released (ReleaseExecute), and every response's server-side session id is
// checked (a new one means the server restarted: the session's settings are gone).
// Message field numbers follow spark/connect/base.proto and relations.proto.
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { type Decoded, type Fields, bytes, decode, encode, msg, msgs, num, str, strs } from './wire.js';
import type { Remote } from './remote.js';
import { type RetryPolicy, Retrying, retryPolicy, transient } from './retry.js';

const SERVICE = '/spark.connect.SparkConnectService/';
const CLIENT_TYPE = 'skewjoin';

/** What the server said went wrong: Spark's error class and message, and gRPC's status code. */
export class SparkError extends Error {
  constructor(
    message: string,
    readonly errorClass: string,
    readonly grpcCode: number,
    readonly classes: string[] = [],
    readonly sqlState = '',
    readonly fragment = '',
  ) {
    super(message);
  }
  /** an error of the query's analysis (a column or function Spark does not know, a parse error) */
  get analysis(): boolean {
    return this.classes.some((c) => /AnalysisException|ParseException/.test(c));
  }
}

/** A source Spark reads as one DataSource of many paths, named `alias` in the SQL. */
export interface SparkSource {
  alias: string;
  paths: string[];
}

/** One streamed answer of ExecutePlan: Arrow IPC bytes, or the progress of the running stages. */
export type ExecuteEvent =
  | { kind: 'arrow'; data: Uint8Array; rows: number }
  | { kind: 'progress'; stages: { id: number; tasks: number; done: number; bytesRead: number }[] };

/** An error of the caller's event handler: never retried. */
class Handler {
  constructor(readonly error: unknown) {}
}

/**
 * Relation.sql = 10 {query = 1}; with sources, inside Relation.with_relations = 41 {root = 1, references = 2}, each
 * reference a Relation.subquery_alias = 16 {input = 1, alias = 2} over Relation.read = 2 {data_source = 2
 * {format = 1, paths = 4}}.
 */
function sqlRelation(sql: string, sources: SparkSource[] = []): Fields {
  const q: Fields = [[10, [[1, sql]]]];
  if (sources.length === 0) return q;
  const ref = (s: SparkSource): Fields => [
    [
      16,
      [
        [1, [[2, [[2, [[1, 'parquet'], ...s.paths.map((p): [number, string] => [4, p])]]]]]],
        [2, s.alias],
      ],
    ],
  ];
  return [[41, [[1, q], ...sources.map((s): [number, Fields] => [2, ref(s)])]]];
}

export class SparkConnectClient {
  readonly remote: Remote;
  readonly sessionId: string;
  /** a session named by the URL is the user's: used, never released */
  private readonly ownsSession: boolean;
  private readonly client: grpc.Client;
  private readonly metadata = new grpc.Metadata();
  private readonly clientType: string;
  private readonly policy: RetryPolicy;
  /** the server's id of our session, from its first answer */
  private serverSession = '';
  private running = new Set<string>();
  private closed = false;

  constructor(remote: Remote, retry?: Partial<Pick<RetryPolicy, 'retries' | 'totalMs'>>) {
    this.remote = remote;
    this.sessionId = remote.sessionId ?? randomUUID();
    this.ownsSession = !remote.sessionId;
    this.policy = retryPolicy(retry);
    const creds = remote.ssl ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
    this.client = new grpc.Client(`${remote.host}:${remote.port}`, creds, {
      'grpc.max_receive_message_length': 256 * 1024 * 1024,
    });
    if (remote.token) this.metadata.set('authorization', `Bearer ${remote.token}`);
    for (const [k, v] of remote.headers) this.metadata.add(k, v);
    this.clientType = remote.userAgent ? `${remote.userAgent} ${CLIENT_TYPE}` : CLIENT_TYPE;
  }

  private userContext(): Fields {
    return [
      [1, this.remote.userId],
      [2, this.remote.userId],
    ]; // UserContext: user_id, user_name
  }

  /** The server-side session id a request reports as observed (field `no` of that request), once known. */
  private observed(no: number): [number, string | undefined] {
    return [no, this.serverSession || undefined];
  }

  /** Every answer's server-side session id: the first one is kept; another one means the server restarted. */
  private checkSession(id: string): void {
    if (!id) return;
    if (!this.serverSession) this.serverSession = id;
    else if (id !== this.serverSession) throw this.restarted(`its session ${this.serverSession} is now ${id}`);
  }

  /**
   * After a restart (SparkError SESSION_CHANGED): the next call opens this session id afresh on the server, whose
   * settings the caller pins again. The operations of the old session are gone.
   */
  renewSession(): void {
    this.serverSession = '';
  }

  private restarted(how: string): SparkError {
    return new SparkError(
      `the Spark Connect server at ${this.where} restarted during the run (${how}): the session's settings ` +
        'and its operations are gone; run again',
      'SESSION_CHANGED',
      grpc.status.ABORTED,
    );
  }

  private get where(): string {
    return `${this.remote.host}:${this.remote.port}`;
  }

  private call(method: string, req: Fields, timeoutMs: number): Promise<Decoded> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        SERVICE + method,
        (x: Uint8Array) => Buffer.from(x),
        (b: Buffer) => decode(b),
        encode(req),
        this.metadata,
        { deadline: Date.now() + timeoutMs },
        (err, res) => (err ? reject(err) : resolve(res!)),
      );
    });
  }

  /** A unary call, retried on transient failures; `session` is the answer's server-side session id field. */
  private async unary(method: string, req: Fields, session: number, timeoutMs = 60_000): Promise<Decoded> {
    const retrying = new Retrying(this.policy, (e, n, ms) => this.lost(e, n, ms));
    for (;;) {
      try {
        const r = await this.call(method, req, timeoutMs);
        this.checkSession(str(r, session));
        return r;
      } catch (e) {
        if (e instanceof SparkError) throw e;
        if (!transient(e)) throw await this.details(e);
        await retrying.wait(e);
      }
    }
  }

  /** ConfigRequest.operation.set: session settings (spark.sql.*). */
  async setConfig(settings: Record<string, string>): Promise<void> {
    const pairs: Fields = Object.entries(settings).map(([k, v]) => [
      1,
      [
        [1, k],
        [2, v],
      ],
    ]); // Set.pairs: KeyValue{key, value}
    await this.unary(
      'Config',
      [[1, this.sessionId], [2, this.userContext()], [3, [[1, pairs]]], [4, this.clientType], this.observed(8)],
      4,
    );
  }

  /** ConfigRequest.operation.get_with_default: the values of settings (spark.app.id, spark.ui.port); '' when unset. */
  async getConfig(keys: string[]): Promise<Map<string, string>> {
    const pairs: Fields = keys.map((k) => [
      1,
      [
        [1, k],
        [2, ''],
      ],
    ]);
    const r = await this.unary(
      'Config',
      [[1, this.sessionId], [2, this.userContext()], [3, [[3, pairs]]], [4, this.clientType], this.observed(8)],
      4,
    );
    return new Map(msgs(r, 2).map((kv) => [str(kv, 1), str(kv, 2)])); // ConfigResponse.pairs
  }

  /** AnalyzePlanRequest.explain = 5 {plan = 1, explain_mode = 2 (SIMPLE = 1: the physical plan)}: Spark's plan of a query. */
  async explain(sql: string, sources: SparkSource[] = []): Promise<string> {
    const r = await this.unary(
      'AnalyzePlan',
      [
        [1, this.sessionId],
        [2, this.userContext()],
        [3, this.clientType],
        [
          5,
          [
            [1, [[1, sqlRelation(sql, sources)]]],
            [2, 1],
          ],
        ],
        this.observed(17),
      ],
      15,
    );
    return str(msg(r, 3) ?? new Map(), 1); // AnalyzePlanResponse.explain = 3 {explain_string = 1}
  }

  /**
   * Run SQL (a query as a Relation, or with `command` as a SqlCommand, e.g. a write) and stream its answers,
   * each once and in order however often the stream drops; `onEvent` may return a promise to hold the stream back.
   */
  async execute(
    sql: string,
    onEvent: (e: ExecuteEvent) => void | Promise<void>,
    o: { command?: boolean; sources?: SparkSource[] } = {},
  ): Promise<void> {
    const operationId = randomUUID();
    const relation = sqlRelation(sql, o.sources);
    // Plan: root = 1, or command = 2 (Command.sql_command = 5 {sql = 1, or input = 6 for a relation with sources})
    const plan: Fields = o.command ? [[2, [[5, o.sources?.length ? [[6, relation]] : [[1, sql]]]]]] : [[1, relation]];
    const request = (): Fields => [
      [1, this.sessionId],
      [2, this.userContext()],
      [6, operationId],
      [3, plan],
      [4, this.clientType],
      [5, [[1, [[1, true]]]]], // request_options: reattach_options {reattachable = true}
      this.observed(8),
    ];
    const reattach = (last: string | undefined): Fields => [
      [1, this.sessionId],
      [2, this.userContext()],
      [3, operationId],
      [4, this.clientType],
      [5, last],
      this.observed(6),
    ];
    this.running.add(operationId);
    const retrying = new Retrying(this.policy, (e, n, ms) => this.lost(e, n, ms));
    let last: string | undefined; // the last response handled
    let started = false; // ExecutePlan was sent: later attempts reattach
    let complete = false;
    let ended = false; // the last stream ended without an error (and without ResultComplete)
    try {
      while (!complete) {
        const call = this.client.makeServerStreamRequest(
          SERVICE + (started ? 'ReattachExecute' : 'ExecutePlan'),
          (x: Uint8Array) => Buffer.from(x),
          (b: Buffer) => decode(b),
          encode(started ? reattach(last) : request()),
          this.metadata,
          {},
        );
        const attached = started;
        started = true;
        try {
          for await (const r of call as AsyncIterable<Decoded>) {
            this.checkSession(str(r, 15));
            if (msg(r, 14)) complete = true; // result_complete
            const ev = responseEvent(r);
            if (ev) {
              try {
                await onEvent(ev);
              } catch (e) {
                throw new Handler(e);
              }
            }
            const id = str(r, 13);
            if (id) {
              last = id;
              retrying.reset();
              if (ev?.kind === 'arrow') this.release(operationId, id);
            }
          }
          // a stream that ends without ResultComplete is continued by ReattachExecute (the server cuts long ones)
          ended = true;
        } catch (e) {
          if (e instanceof Handler || e instanceof SparkError) throw e;
          // a server without reattachable execution (before Spark 3.5) ended its one stream: that was all
          if (attached && ended && (e as grpc.ServiceError)?.code === grpc.status.UNIMPLEMENTED) {
            complete = true;
            continue;
          }
          ended = false;
          const gone = /INVALID_HANDLE\.(OPERATION_NOT_FOUND|SESSION_NOT_FOUND)/.exec(
            (e as grpc.ServiceError)?.details ?? '',
          );
          if (gone && attached) {
            // before any answer the ExecutePlan may not have reached the server: send it again
            if (last === undefined && gone[1] === 'OPERATION_NOT_FOUND') started = false;
            else
              throw this.restarted(
                `it no longer knows the ${gone[1] === 'OPERATION_NOT_FOUND' ? 'operation' : 'session'}, ${gone[0]}`,
              );
          } else if (/INVALID_HANDLE\.SESSION_CHANGED/.test((e as grpc.ServiceError)?.details ?? '')) {
            throw this.restarted('INVALID_HANDLE.SESSION_CHANGED');
          } else if (!transient(e)) throw e;
          await retrying.wait(e);
        } finally {
          call.cancel();
        }
      }
      this.release(operationId);
    } catch (e) {
      this.release(operationId);
      if (e instanceof Handler) throw e.error;
      throw e instanceof SparkError ? e : await this.details(e);
    } finally {
      this.running.delete(operationId);
    }
  }

  /**
   * ReleaseExecute: release_until = 6 {response_id = 1} (the responses up to it), or release_all = 5 (the operation).
   * Not waited for: the server frees abandoned operations itself.
   */
  private release(operationId: string, until?: string): void {
    if (this.closed) return;
    this.call(
      'ReleaseExecute',
      [
        [1, this.sessionId],
        [2, this.userContext()],
        [3, operationId],
        [4, this.clientType],
        until ? [6, [[1, until]]] : [5, []],
        this.observed(7),
      ],
      10_000,
    ).catch(() => undefined);
  }

  /** Interrupt the operations under way (Ctrl-C). */
  async interrupt(): Promise<void> {
    for (const id of [...this.running]) {
      // InterruptRequest: interrupt_type = 4 (OPERATION_ID = 3), operation_id = 6
      await this.call(
        'Interrupt',
        [[1, this.sessionId], [2, this.userContext()], [3, this.clientType], [4, 3], [6, id], this.observed(7)],
        5000,
      ).catch(() => undefined);
    }
  }

  /** Whether an operation is under way. */
  get busy(): boolean {
    return this.running.size > 0;
  }

  /** ReleaseSession (of a session we opened), then close the channel. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.ownsSession)
      await this.call(
        'ReleaseSession',
        [
          [1, this.sessionId],
          [2, this.userContext()],
          [3, this.clientType],
        ],
        5000,
      ).catch(() => undefined);
    this.closed = true;
    this.client.close();
  }

  /** The error of a call whose retries are spent: what failed, how often it was tried, for how long. */
  private lost(e: unknown, attempts: number, waitedMs: number): SparkError {
    const g = e as grpc.ServiceError;
    const tried = attempts ? `; tried ${attempts + 1} times over ${(waitedMs / 1000).toFixed(1)} s` : '';
    return new SparkError(
      `cannot reach the Spark Connect server at ${this.where} (${g?.details ?? (e as Error)?.message ?? e}${tried})`,
      'UNREACHABLE',
      grpc.status.UNAVAILABLE,
    );
  }

  /** A gRPC error as a SparkError from the status details (ErrorInfo) alone. */
  private describe(e: unknown): SparkError {
    const g = e as grpc.ServiceError;
    if (g?.code === grpc.status.UNAVAILABLE || g?.code === grpc.status.DEADLINE_EXCEEDED) return this.lost(e, 0, 0);
    if (g?.code === grpc.status.UNAUTHENTICATED || g?.code === grpc.status.PERMISSION_DENIED) {
      return new SparkError(
        `the Spark Connect server at ${this.where} refused the client: ${g.details}` +
          ' (check the token in the remote URL)',
        'UNAUTHENTICATED',
        g.code,
      );
    }
    const info = errorInfo(g);
    return new SparkError(
      g?.details ?? String(e),
      info.errorClass ?? '',
      g?.code ?? grpc.status.UNKNOWN,
      info.classes,
      info.sqlState ?? '',
    );
  }

  /** The full error through FetchErrorDetails (the status message may be cut short). */
  private async details(e: unknown): Promise<SparkError> {
    const base = this.describe(e);
    const errorId = errorInfo(e as grpc.ServiceError).errorId;
    if (!errorId || this.closed) return base;
    try {
      const r = await this.call(
        'FetchErrorDetails',
        [[1, this.sessionId], [2, this.userContext()], [3, errorId], [4, this.clientType], this.observed(5)],
        10_000,
      );
      const errors = msgs(r, 2);
      const root = errors[num(r, 1)];
      if (!root) return base;
      const t = msg(root, 5); // Error.spark_throwable
      const ctx = t ? msgs(t, 3)[0] : undefined; // SparkThrowable.query_contexts
      return new SparkError(
        str(root, 2) || base.message,
        (t && str(t, 1)) || base.errorClass,
        base.grpcCode,
        strs(root, 1),
        (t && str(t, 4)) || base.sqlState,
        ctx ? str(ctx, 5) : '',
      );
    } catch {
      return base;
    }
  }
}

/** ErrorInfo from the status details (google.rpc.Status.details: Any{type_url, value}). */
function errorInfo(e: grpc.ServiceError | undefined): {
  errorClass?: string;
  errorId?: string;
  classes: string[];
  sqlState?: string;
} {
  const raw = e?.metadata?.get('grpc-status-details-bin')?.[0];
  if (!(raw instanceof Buffer)) return { classes: [] };
  for (const any of msgs(decode(raw), 3)) {
    if (!str(any, 1).endsWith('google.rpc.ErrorInfo')) continue;
    const info = decode(bytes(any, 2) ?? new Uint8Array());
    const meta = new Map(msgs(info, 3).map((kv) => [str(kv, 1), str(kv, 2)]));
    let classes: string[] = [];
    try {
      classes = JSON.parse(meta.get('classes') ?? '[]');
    } catch {
      /* not a list */
    }
    return {
      errorClass: meta.get('errorClass'),
      errorId: meta.get('errorId'),
      classes,
      sqlState: meta.get('sqlState'),
    };
  }
  return { classes: [] };
}

/** ExecutePlanResponse: arrow_batch = 2 {row_count = 1, data = 2}; execution_progress = 18 {stages = 1}. */
function responseEvent(r: Decoded): ExecuteEvent | null {
  const batch = msg(r, 2);
  if (batch) return { kind: 'arrow', data: bytes(batch, 2) ?? new Uint8Array(), rows: num(batch, 1) };
  const progress = msg(r, 18);
  if (progress) {
    // StageInfo: stage_id = 1, num_tasks = 2, num_completed_tasks = 3, input_bytes_read = 4
    const stages = msgs(progress, 1).map((s) => ({
      id: num(s, 1),
      tasks: num(s, 2),
      done: num(s, 3),
      bytesRead: num(s, 4),
    }));
    return { kind: 'progress', stages };
  }
  return null;
}
