// A fake ExecContext (physical/operator.ts) for testing an operator's coordinator side alone: no pool, no scans, no
// progress; a scan's rows are handed in per node, every task runs on this thread, and every task and every request
// the operator makes is recorded, so that a test checks what the operator planned apart from running it.
// Typed against ExecContext (`implements`): a member the contract adds or changes shows here, not in a test's run.
import { type Batch, emptyBatch } from '../dist/kernels/column.js';
import { analyzeRun } from '../dist/physical/operators.js';
import type { Downstream, ExecContext, Streamed, TaskMeta } from '../dist/physical/operator.js';
import { type Pipeline, type StopRule, type Stopped, pipelineOf } from '../dist/physical/pipeline.js';
import { emptyStats } from '../dist/physical/stats.js';
import { type TaskResult, type TaskSpec, withSeed } from '../dist/physical/task.js';
import type { BoundNode } from '../dist/plan/bound.js';
import type { Settings } from '../dist/plan/load.js';
import { runInThread } from '../dist/runtime/local.js';
import { Spiller } from '../dist/spill/spiller.js';

export interface FakeOptions {
  /** what one task may hold (ExecContext.taskShare) */
  share?: number;
  /** the memory budget in bytes (a real Spiller: held output, release, spill) */
  budget?: number;
}

export class FakeContext implements ExecContext {
  readonly stats = emptyStats();
  readonly inThread = true;
  /** every task the operator ran: its statistics' stage, kind, partition and split label */
  readonly tasks: { stage: string; kind: string; partition: number; split?: string }[] = [];
  /** every Downstream request the operator made of a pipeline below it */
  readonly requests: Downstream[] = [];
  /** batches handed to streamBatches' consumer before it had enough */
  streamedBatches = 0;
  released = 0;
  readonly memory: Spiller;

  constructor(
    readonly settings: Settings,
    /** the rows of each scan node (by the bound node object), one map task per batch */
    private readonly scans: Map<unknown, Batch[]>,
    private readonly o: FakeOptions = {},
  ) {
    const real = new Spiller(o.budget ?? 1 << 30, settings.spillDir);
    const release = real.release.bind(real);
    real.release = (n: number) => {
      this.released += n;
      release(n);
    };
    this.memory = real;
  }
  /** what an operator reported, folded into `stats` by its owner's analyze as the executor does */
  report(owner: any, metrics: any) {
    analyzeRun(owner, metrics, this.stats as any);
  }
  taskShare() {
    return this.o.share ?? Number.POSITIVE_INFINITY;
  }
  coldAndSmall() {
    return false;
  }
  runAside(task: TaskSpec): Promise<TaskResult> {
    return runInThread(task);
  }
  async run(task: TaskSpec, meta: TaskMeta): Promise<TaskResult> {
    this.tasks.push({ stage: meta.stage, kind: meta.kind, partition: meta.partition, split: meta.split });
    const r = await runInThread(task);
    // shuffle output is held as the executor holds it (within the budget, or spilled)
    if (task.sink.kind === 'partition' || task.sink.kind === 'range' || task.source.kind === 'split')
      r.batches = this.memory.admit(r.batches).blocks;
    return r;
  }
  /** A scan's pipeline: one task per batch handed in; anything else is not for this fake. */
  async execute(p: Pipeline, d: Downstream): Promise<TaskResult[]> {
    this.requests.push(d);
    if (p.source.kind !== 'scan') throw new Error(`the fake runs scans only, not ${p.source.kind}`);
    const rows = this.scans.get(p.source) ?? [emptyBatch(p.source.schema)];
    return Promise.all(
      rows.map((b, i) =>
        this.run(
          {
            source: { kind: 'batches', schema: p.source.schema, batches: [b] },
            ops: p.ops,
            combine: d.combine,
            sink: withSeed(d.sink, i),
          },
          { stage: d.stage, kind: 'map', partition: i },
        ),
      ),
    );
  }
  /** A scan's map tasks: as execute runs them, stopping after the first task `stop` says yes to. */
  async mapTasks(p: Pipeline<Extract<BoundNode, { kind: 'scan' }>>, d: Downstream, stop?: StopRule): Promise<Stopped> {
    const results = await this.execute(p, d);
    const k = stop ? results.findIndex((r) => stop(r)) : -1;
    if (k < 0 || k === results.length - 1) return { results, rest: null };
    // the rest: the batches not read, as a scan the fake reads
    const source = { ...p.source };
    this.scans.set(source, (this.scans.get(p.source) ?? []).slice(k + 1));
    return { results: results.slice(0, k + 1), rest: { ...p, source } };
  }
  /** A scan's pipeline under a stop rule (the fake runs scans only). */
  executeUntil(p: Pipeline, d: Downstream, stop: StopRule): Promise<Stopped> {
    if (p.source.kind !== 'scan') throw new Error(`the fake runs scans only, not ${p.source.kind}`);
    return this.mapTasks(p as Pipeline<Extract<BoundNode, { kind: 'scan' }>>, d, stop);
  }
  async collectBatches(node: BoundNode): Promise<Batch[]> {
    const rs = await this.execute(pipelineOf(node), { stage: 'output', sink: { kind: 'collect' } });
    return rs.flatMap((r) => r.batches.filter((b): b is Batch => b !== null));
  }
  async streamBatches(node: BoundNode, emit: (out: Streamed) => Promise<unknown> | boolean | void): Promise<void> {
    for (const b of await this.collectBatches(node)) {
      this.streamedBatches++;
      if ((await emit({ batches: [b] })) === true) return;
    }
  }
  share(b: Batch): Batch {
    return b;
  }
  async close() {
    await this.memory.close();
  }
}
