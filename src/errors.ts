// Typed errors at the engine's boundaries. Each carries the exit code the CLI
// uses (shared/PLAN-SPEC.md: 2 bad plan or arguments, 3 input data, 1 other).

export class SkewjoinError extends Error {
  readonly exitCode: number = 1;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The plan or the command line is wrong; `path` is the JSON path of the offending field. */
export class PlanError extends SkewjoinError {
  override readonly exitCode = 2;
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
  }
}

/** An input file is missing, unreadable, corrupt, of an unsupported type or of a conflicting schema. */
export class InputError extends SkewjoinError {
  override readonly exitCode = 3;
  constructor(
    message: string,
    readonly file?: string,
    readonly column?: string,
  ) {
    super(message);
  }
}

/** A failure while running the query that is not the user's input. */
export class ExecutionError extends SkewjoinError {
  override readonly exitCode = 1;
}

/**
 * The reader of the output went away (a pipe closed: `skewjoin q.sql --output - | head`): the query stops; the
 * command line exits 0 quietly, as `head` users expect.
 */
export class OutputClosedError extends ExecutionError {}

export interface ErrorPayload {
  kind: string;
  message: string;
  file?: string;
  column?: string;
  path?: string;
  detail?: string;
  stack?: string;
}

/** The plain form of an error, for sending it from a worker (structured clone drops custom fields). */
export function errorPayload(e: unknown): ErrorPayload {
  const err = e instanceof Error ? e : new Error(String(e));
  if (err instanceof InputError)
    return { kind: 'InputError', message: err.message, file: err.file, column: err.column };
  if (err instanceof PlanError) return { kind: 'PlanError', message: err.message, path: err.path, detail: err.detail };
  return { kind: 'Error', message: err.message, stack: err.stack };
}

/** Rebuild a typed error from its plain form. */
export function reviveError(p: ErrorPayload): Error {
  if (p.kind === 'InputError') return new InputError(p.message, p.file, p.column);
  if (p.kind === 'PlanError') return new PlanError(p.path ?? '', p.detail ?? p.message);
  const e = new ExecutionError(p.message);
  if (p.stack) e.stack = p.stack;
  return e;
}

export function jsonPath(parts: readonly PropertyKey[]): string {
  let s = '';
  for (const p of parts) {
    if (typeof p === 'number') s += `[${p}]`;
    else s += s ? `.${String(p)}` : String(p);
  }
  return s;
}
