// A small Spark Connect client over gRPC: one session, Config, ExecutePlan of
// SQL (results as Arrow IPC batches), Interrupt, ReleaseSession, and errors read
// through FetchErrorDetails. Message field numbers follow spark/connect/base.proto.
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { type Decoded, type Fields, bytes, decode, encode, msg, msgs, num, str, strs } from './wire.js';
import { type Remote, parseRemote } from './remote.js';

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

/** One streamed answer of ExecutePlan: Arrow IPC bytes, or the progress of the running stages. */
export type ExecuteEvent =
  | { kind: 'arrow'; data: Uint8Array; rows: number }
  | { kind: 'progress'; stages: { id: number; tasks: number; done: number; bytesRead: number }[] };

export class SparkConnectClient {
  readonly remote: Remote;
  readonly sessionId = randomUUID();
  private readonly client: grpc.Client;
  private readonly metadata = new grpc.Metadata();
  private running = new Set<string>();

  constructor(url: string) {
    this.remote = parseRemote(url);
    const creds = this.remote.ssl ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
    this.client = new grpc.Client(`${this.remote.host}:${this.remote.port}`, creds, {
      'grpc.max_receive_message_length': 256 * 1024 * 1024,
    });
    if (this.remote.token) this.metadata.set('authorization', `Bearer ${this.remote.token}`);
  }

  private userContext(): Fields {
    return [
      [1, this.remote.userId],
      [2, this.remote.userId],
    ]; // UserContext: user_id, user_name
  }

  private unary(method: string, req: Fields, timeoutMs = 60_000): Promise<Decoded> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        SERVICE + method,
        (x: Uint8Array) => Buffer.from(x),
        (b: Buffer) => decode(b),
        encode(req),
        this.metadata,
        { deadline: Date.now() + timeoutMs },
        (err, res) => {
          if (err) reject(err);
          else resolve(res!);
        },
      );
    }).catch((e) => {
      throw this.describe(e);
    }) as Promise<Decoded>;
  }

  /** Wait until the server answers (a local server that is still starting), at most `ms`. */
  waitReady(ms: number): Promise<void> {
    return new Promise((resolve, reject) =>
      this.client.waitForReady(Date.now() + ms, (e) => (e ? reject(this.unreachable(e)) : resolve())),
    );
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
    await this.unary('Config', [
      [1, this.sessionId],
      [2, this.userContext()],
      [3, [[1, pairs]]],
      [4, CLIENT_TYPE],
    ]);
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
    const r = await this.unary('Config', [
      [1, this.sessionId],
      [2, this.userContext()],
      [3, [[3, pairs]]],
      [4, CLIENT_TYPE],
    ]);
    return new Map(msgs(r, 2).map((kv) => [str(kv, 1), str(kv, 2)])); // ConfigResponse.pairs
  }

  /**
   * Run SQL (a query as a Relation, or with `command` as a SqlCommand, e.g. a write)
   * and stream its answers; `onEvent` may return a promise to hold the stream back.
   */
  async execute(sql: string, onEvent: (e: ExecuteEvent) => void | Promise<void>, command = false): Promise<void> {
    const operationId = randomUUID();
    // Plan: root = 1 (Relation.sql = 10 {query = 1}) or command = 2 (Command.sql_command = 5 {sql = 1})
    const plan: Fields = command ? [[2, [[5, [[1, sql]]]]]] : [[1, [[10, [[1, sql]]]]]];
    const req: Fields = [
      [1, this.sessionId],
      [2, this.userContext()],
      [6, operationId],
      [3, plan],
      [4, CLIENT_TYPE],
    ];
    this.running.add(operationId);
    try {
      await new Promise<void>((resolve, reject) => {
        const call = this.client.makeServerStreamRequest(
          SERVICE + 'ExecutePlan',
          (x: Uint8Array) => Buffer.from(x),
          (b: Buffer) => decode(b),
          encode(req),
          this.metadata,
          {},
        );
        call.on('data', (r: Decoded) => {
          const ev = responseEvent(r);
          if (!ev) return;
          const held = onEvent(ev);
          if (held) {
            call.pause();
            held.then(
              () => call.resume(),
              (e) => {
                call.cancel();
                reject(e);
              },
            );
          }
        });
        call.on('error', reject);
        call.on('end', resolve);
      });
    } catch (e) {
      throw await this.details(e);
    } finally {
      this.running.delete(operationId);
    }
  }

  /** Interrupt the operations under way (Ctrl-C). */
  async interrupt(): Promise<void> {
    for (const id of [...this.running]) {
      // InterruptRequest: interrupt_type = 4 (OPERATION_ID = 3), operation_id = 6
      await this.unary(
        'Interrupt',
        [
          [1, this.sessionId],
          [2, this.userContext()],
          [3, CLIENT_TYPE],
          [4, 3],
          [6, id],
        ],
        5000,
      ).catch(() => undefined);
    }
  }

  /** Whether an operation is under way. */
  get busy(): boolean {
    return this.running.size > 0;
  }

  /** ReleaseSession, then close the channel. */
  async close(): Promise<void> {
    await this.unary(
      'ReleaseSession',
      [
        [1, this.sessionId],
        [2, this.userContext()],
        [3, CLIENT_TYPE],
      ],
      5000,
    ).catch(() => undefined);
    this.client.close();
  }

  private unreachable(e: unknown): SparkError {
    return new SparkError(
      `cannot reach the Spark Connect server at ${this.remote.host}:${this.remote.port}` +
        ` (${(e as Error).message ?? e})`,
      'UNREACHABLE',
      grpc.status.UNAVAILABLE,
    );
  }

  /** A gRPC error as a SparkError from the status details (ErrorInfo) alone. */
  private describe(e: unknown): SparkError {
    const g = e as grpc.ServiceError;
    if (g?.code === grpc.status.UNAVAILABLE || g?.code === grpc.status.DEADLINE_EXCEEDED) return this.unreachable(e);
    if (g?.code === grpc.status.UNAUTHENTICATED || g?.code === grpc.status.PERMISSION_DENIED) {
      return new SparkError(
        `the Spark Connect server at ${this.remote.host}:${this.remote.port} refused the client: ${g.details}` +
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
    if (!errorId) return base;
    try {
      const r = await this.unary(
        'FetchErrorDetails',
        [
          [1, this.sessionId],
          [2, this.userContext()],
          [3, errorId],
          [4, CLIENT_TYPE],
        ],
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
