// Repeated subplans computed once. A plan has no common table expressions: a view read twice is spelled as two
// identical subtrees (TPC-H q15 reads its revenue view for the rows and again for their maximum; q11, q02 and q17
// join the same tables twice; plan/share.ts makes copies that differ only in their scans' columns identical). A
// join or an aggregate (with the row operators above it) whose whole subtree occurs more than once is a unit: its
// first reader computes it as it would alone, its tasks also handing a copy of the unit's rows back (a `tee`
// operator at the unit's top). The rows are held on the coordinator until the last reader has them, within
// HOLD_SHARE of the memory budget; past that they are dropped as they come and every other reader computes the
// unit again, as without sharing. Reading held rows is one task per chunk running the reader's own operators.
// A pipeline that reads a unit runs through `Repeats.execute`, an operator wrapping the unit's own: the scheduler
// only asks whether a pipeline is one (`reads`), and hands each task's tee to `before`, `after` and `skipped`.
import { type Batch, type Schema, batchesBytes, emptyBatch } from '../kernels/column.js';
import type { BoundNode } from '../plan/bound.js';
import { children, fingerprint, shareable, sourceBelow } from '../plan/fingerprint.js';
import { packBlocks } from '../spill/block.js';
import type { Spiller } from '../spill/spiller.js';
import type { Analyze, Downstream, ExecContext } from './operator.js';
import { type Pipeline, type Stopped, readWhole } from './pipeline.js';
import type { RepeatStats } from './stats.js';
import { type RowOp, type TaskResult, type TaskSpec, withSeed } from './task.js';

declare module './operator.js' {
  interface RunMetrics {
    /** a repeated subtree computed once: its rows held for the other readers, or not */
    repeat: RepeatStats;
  }
}

/** A repeated subtree's metrics into the statistics: one entry per unit, when its first reader's run ended. */
export const repeatAnalyze: Analyze<never, RepeatStats> = {
  run: (r, into) => {
    (into.repeats ??= []).push(r);
  },
};

/** Held rows of a repeated subtree read by tasks of at least this many bytes (fewer tasks for small ones). */
const HELD_CHUNK_BYTES = 1024 * 1024;

/**
 * The share of the memory budget a repeated subtree's rows may take while held: above it they are computed again
 * for each reader. Held rows stay until the last reader has them, beside the rest of the query's work (shuffle
 * blocks, broadcast tables); the subtrees this pays for are small results of large inputs (q17: 60K of 60M rows,
 * 1.4 MB at SF 10; q11: 320K rows, 7.7 MB; q02: 6K rows).
 */
export const HOLD_SHARE = 1 / 8;

/** A repeated subtree as its pipelines see it: its group, and the row operators above its source that are its own. */
export interface Unit {
  key: string;
  ops: number;
  /** the subtree's output */
  schema: Schema;
}

interface Entry {
  key: string;
  id: number;
  /** readers in the plan */
  all: number;
  /** readers not yet arrived, and those waiting for the first reader's run to end */
  readers: number;
  waiting: number;
  state: 'idle' | 'computing' | 'held' | 'refused';
  /** settled when the first reader's run ends (or the reader that said it would compute it does not) */
  computed?: Promise<void>;
  end?: () => void;
  /** the reader that said it will compute the unit (see sharing) */
  claimer?: Unit;
  rows: Batch[];
  /** bytes of `rows`, reserved in the budget */
  bytes: number;
  /** what the first reader's run handed back, and why it is not held */
  seen: { rows: number; bytes: number; reason?: string };
}

/** What a reader does: read the held rows, compute the unit with a tee (for the others too), or compute it alone. */
export type Arrival = { rows: Batch[] } | { tee: number } | { alone: true };

/** The repeated subtrees of a plan, or null when it has none; `cap`: Settings.repeatBytes. */
export function sharedRepeats(root: BoundNode, budget: Spiller, cap?: number): Repeats | null {
  const r = new Repeats(root, budget, cap);
  return r.size > 0 ? r : null;
}

export class Repeats {
  /** each repeated unit's source node (the join or aggregate its pipelines start at) */
  private readonly units = new Map<BoundNode, Unit>();
  private readonly entries = new Map<string, Entry>();
  private readonly byId: Entry[] = [];
  /** bytes held at most for one unit */
  readonly cap: number;

  constructor(
    root: BoundNode,
    private readonly budget: Spiller,
    cap?: number,
  ) {
    this.cap = cap ?? budget.limit * HOLD_SHARE;
    for (const [key, nodes] of repeatedUnits(root)) {
      const e: Entry = {
        key,
        id: this.byId.length,
        all: nodes.length,
        readers: nodes.length,
        waiting: 0,
        seen: { rows: 0, bytes: 0 },
        state: 'idle',
        rows: [],
        bytes: 0,
      };
      this.byId.push(e);
      this.entries.set(key, e);
      for (const n of nodes) this.units.set(sourceBelow(n), { key, ops: opsAbove(n), schema: n.schema });
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** The unit a pipeline starting at `source` reads, if it is one (its own row operators come first in the pipeline). */
  unitOf(source: BoundNode): Unit | undefined {
    return this.units.get(source);
  }

  /** The unit pipeline `p` reads whole (with the unit's own row operators), if it reads one. */
  reads(p: Pipeline): Unit | undefined {
    const u = this.units.get(p.source);
    return u && p.ops.length >= u.ops ? u : undefined;
  }

  /**
   * A pipeline reading unit `u`, run as an operator wrapping the unit's own (`run`: the pipeline given, through the
   * unit's operator): the first reader runs it with a tee after the unit's own operators; the others read the rows
   * held. A first reader stopped early (ExecContext.executeUntil: a side read up to a cap, its rest read later) has
   * not seen them all: the others compute it again.
   */
  async execute(
    ctx: ExecContext,
    p: Pipeline,
    d: Downstream,
    u: Unit,
    run: (p: Pipeline) => Promise<Stopped>,
  ): Promise<Stopped> {
    const streamed = d.sink.kind === 'collect' && d.sink.stream !== undefined;
    const how = await this.arrive(u, !streamed && !d.eager, !d.eager);
    if ('rows' in how) return readWhole(await this.readHeld(ctx, p, d, u, how.rows));
    if (!('tee' in how)) return run(p);
    const ops: RowOp[] = [...p.ops.slice(0, u.ops), { kind: 'tee', id: how.tee }, ...p.ops.slice(u.ops)];
    let why = 'the run failed';
    try {
      const r = await run({ ...p, ops });
      why = r.rest ? 'its first reader stopped at a cap (a join side measured)' : '';
      return r;
    } finally {
      ctx.report('repeat', this.computed(how.tee, why, p.source.id));
    }
  }

  /** A reader of a repeated subtree's held rows: a task per chunk of them runs the reader's own operators. */
  private readHeld(ctx: ExecContext, p: Pipeline, d: Downstream, u: Unit, rows: Batch[]): Promise<TaskResult[]> {
    const schema = u.schema;
    const bytes = batchesBytes(rows);
    const chunks = rows.length
      ? packBlocks(rows, Math.max(HELD_CHUNK_BYTES, bytes / (2 * ctx.settings.workers)))
      : [[]];
    const here = ctx.coldAndSmall(bytes);
    return Promise.all(
      chunks.map((c, i) =>
        ctx.run(
          {
            source: { kind: 'batches', schema, batches: c.length ? c.map((b) => ctx.share(b)) : [emptyBatch(schema)] },
            ops: p.ops.slice(u.ops),
            combine: d.combine,
            sink: withSeed(d.sink, i),
          },
          { stage: d.stage, kind: 'map', partition: i, source: p.source.id, split: 'repeated subtree computed once' },
          here,
        ),
      ),
    );
  }

  /** A task about to run: without its tee once the unit's rows passed the cap (they are not handed back any more). */
  before(t: TaskSpec): TaskSpec {
    const tee = teeOf(t);
    return tee === undefined || this.teeing(tee) ? t : { ...t, ops: t.ops.filter((o) => o.kind !== 'tee') };
  }

  /** Task `t`'s result: the copy of the unit's rows its tee handed back, taken off it. */
  after(t: TaskSpec, r: TaskResult): void {
    const tee = teeOf(t);
    if (!r.teed || tee === undefined) return;
    const rows = r.teed;
    r.teed = undefined;
    this.teed(tee, rows);
  }

  /** A task with a tee was not run (a streamed output had all it wanted): the rows held are not all of them. */
  skippedTask(t: TaskSpec): void {
    const tee = teeOf(t);
    if (tee !== undefined) this.skipped(tee);
  }

  /**
   * A reader arrives (`u`: its place). `mayHold`: it may compute the unit for the others too (its tasks run every row
   * of it through the tee; not when they skip some: a streamed output's). `mayRead`: it may read rows computed before
   * (not a join asked for eager partial states). A reader that another has said it will compute (see sharing), or is
   * computing, waits for it.
   */
  async arrive(u: Unit, mayHold: boolean, mayRead: boolean): Promise<Arrival> {
    const e = this.entries.get(u.key)!;
    e.readers--;
    if (mayRead && this.busy(e, u)) {
      e.waiting++;
      await e.computed;
      e.waiting--;
    }
    if (e.state === 'held' && mayRead) {
      const rows = e.rows;
      if (e.readers === 0 && e.waiting === 0) this.drop(e, 'refused');
      return { rows };
    }
    const mine = e.claimer === u;
    if (e.state !== 'idle' || !mayHold || e.readers + e.waiting === 0 || !(mine || e.claimer === undefined)) {
      if (mine) this.release(e); // it said it would compute for the others, and does not: they go on
      return { alone: true };
    }
    e.state = 'computing';
    this.promise(e);
    return { tee: e.id };
  }

  /**
   * Whether a reader's rows of a unit will be read from rows held for several readers (so that it must not ask for
   * them otherwise: eager partial states). The first to ask says it will compute them (the others wait for it);
   * false once they passed the cap, or when no other reader is left.
   */
  async sharing(u: Unit): Promise<boolean> {
    const e = this.entries.get(u.key)!;
    if (e.state === 'idle' && (e.claimer === undefined || e.claimer === u) && e.readers > 1) {
      e.claimer = u;
      this.promise(e);
      return true;
    }
    if (this.busy(e, u)) await e.computed;
    return e.state === 'held';
  }

  /** Another reader computes the unit, or has said it will. */
  private busy(e: Entry, u: Unit): boolean {
    return e.state === 'computing' || (e.state === 'idle' && e.claimer !== undefined && e.claimer !== u);
  }

  /** The promise the waiting readers wait on, made when someone will compute the unit. */
  private promise(e: Entry): void {
    if (e.end) return;
    e.computed = new Promise<void>((resolve) => {
      e.end = resolve;
    });
  }

  /** The waiting readers woken: the unit is computed, or the reader that was to compute it does not. */
  private release(e: Entry): void {
    e.claimer = undefined;
    const end = e.end;
    e.end = undefined;
    end?.();
  }

  /** Whether tasks with the tee of unit `id` still hand rows back (not once they passed the cap). */
  teeing(id: number): boolean {
    return this.byId[id].state === 'computing';
  }

  /** A task's copy of the unit's rows. */
  teed(id: number, rows: Batch[]): void {
    const e = this.byId[id];
    const bytes = batchesBytes(rows);
    e.seen.rows += rows.reduce((a, b) => a + b.length, 0);
    e.seen.bytes += bytes;
    if (e.state !== 'computing') return;
    if (e.bytes + bytes > this.cap) this.refuse(e, `its rows passed the cap (${this.cap} bytes)`);
    else if (bytes > this.budget.free()) this.refuse(e, 'its rows passed the memory budget left');
    else {
      e.rows.push(...rows);
      e.bytes += bytes;
      this.budget.reserve(bytes);
    }
  }

  /** A task with the tee was not run (a streamed output had all it wanted): the rows held are not all of them. */
  skipped(id: number): void {
    const e = this.byId[id];
    if (e.state === 'computing') this.refuse(e, 'a task was skipped (a streamed output had all it wanted)');
  }

  /**
   * The first reader's run ended: its rows are held for the others, or dropped. `incomplete`: why they are not all
   * of the subtree's rows ('' when they are).
   */
  computed(id: number, incomplete: string, first: string): RepeatStats {
    const e = this.byId[id];
    if (e.state === 'computing') {
      if (incomplete) this.refuse(e, incomplete);
      else if (e.readers + e.waiting > 0) e.state = 'held';
      else this.refuse(e, 'no reader left');
    }
    this.release(e);
    const { reason, ...seen } = e.seen;
    return { id: first, readers: e.all, held: e.state === 'held', ...seen, ...(reason ? { reason } : {}) };
  }

  private refuse(e: Entry, reason: string): void {
    e.seen.reason ??= reason;
    this.drop(e, 'refused');
  }

  private drop(e: Entry, state: Entry['state']): void {
    e.state = state;
    e.rows = [];
    this.budget.release(e.bytes);
    e.bytes = 0;
  }

  /** Release what is still held (a reader that never came: the run ended early or failed). */
  close(): void {
    for (const e of this.entries.values()) {
      this.drop(e, 'refused');
      this.release(e);
    }
  }
}

/** The id of the tee among a task's operators, if any. */
function teeOf(t: TaskSpec): number | undefined {
  for (const o of t.ops) if (o.kind === 'tee') return o.id;
  return undefined;
}

/** Row operators from a node down to its pipeline's source. */
function opsAbove(n: BoundNode): number {
  let k = 0;
  for (; n.kind === 'filter' || n.kind === 'project' || n.kind === 'compute'; n = n.input) k++;
  return k;
}

/** The outermost shareable subtrees that occur more than once, by fingerprint, in groups of two or more. */
export function repeatedUnits(root: BoundNode): Map<string, BoundNode[]> {
  const keys = new Map<BoundNode, string>(),
    counts = new Map<string, number>();
  const count = (n: BoundNode) => {
    if (shareable(n)) {
      const k = fingerprint(n);
      keys.set(n, k);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    for (const c of children(n)) count(c);
  };
  count(root);
  const groups = new Map<string, BoundNode[]>();
  const mark = (n: BoundNode) => {
    const k = keys.get(n);
    if (k !== undefined && counts.get(k)! > 1) groups.set(k, [...(groups.get(k) ?? []), n]);
    else for (const c of children(n)) mark(c);
  };
  mark(root);
  for (const [k, ns] of groups) if (ns.length < 2) groups.delete(k);
  return groups;
}
