// A fake ExecContext (physical/operator.ts) for testing an operator's coordinator side alone: no pool, no scans, no
// progress; a scan's rows are handed in per node, every task runs on this thread, and every task and every request
// the operator makes is recorded, so that a test checks what the operator planned apart from running it.
import { type Batch, emptyBatch } from '../dist/kernels/column.js';
import { analyzeRun } from '../dist/physical/operators.js';
import { pipelineOf } from '../dist/physical/pipeline.js';
import { withSeed } from '../dist/physical/task.js';
import { runInThread } from '../dist/runtime/local.js';
import { Spiller } from '../dist/spill/spiller.js';

export interface FakeOptions {
  /** what one task may hold (ExecContext.taskShare) */
  share?: number;
  /** the memory budget in bytes (a real Spiller: held output, release, spill) */
  budget?: number;
}

export class FakeContext {
  readonly stats = {
    wallMs: 0,
    shuffles: [] as any[],
    tasks: [] as any[],
    joins: [] as any[],
    aggregates: [] as any[],
    eager: [] as string[],
    spilledBytes: 0,
    spillReadBytes: 0,
  };
  readonly inThread = true;
  /** every task the operator ran: its statistics' stage, kind, partition and split label */
  readonly tasks: { stage: string; kind: string; partition: number; split?: string }[] = [];
  /** every Downstream request the operator made of a pipeline below it */
  readonly requests: any[] = [];
  /** batches handed to streamBatches' consumer before it had enough */
  streamedBatches = 0;
  released = 0;
  readonly memory: any;

  constructor(
    readonly settings: any,
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
  runAside(task: any) {
    return runInThread(task);
  }
  async run(task: any, meta: any) {
    this.tasks.push({ stage: meta.stage, kind: meta.kind, partition: meta.partition, split: meta.split });
    const r = await runInThread(task);
    // shuffle output is held as the executor holds it (within the budget, or spilled)
    if (task.sink.kind === 'partition' || task.sink.kind === 'range' || task.source.kind === 'split')
      r.batches = this.memory.admit(r.batches).blocks;
    return r;
  }
  /** A scan's pipeline: one task per batch handed in; anything else is not for this fake. */
  async execute(p: any, d: any) {
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
  async collectBatches(node: unknown) {
    const rs = await this.execute(pipelineOf(node as any), { stage: 'output', sink: { kind: 'collect' } });
    return rs.flatMap((r: any) => r.batches);
  }
  async streamBatches(node: unknown, emit: (out: { batches: Batch[] }) => unknown) {
    for (const b of await this.collectBatches(node)) {
      this.streamedBatches++;
      if ((await emit({ batches: [b] })) === true) return;
    }
  }
  share(b: Batch) {
    return b;
  }
  async close() {
    await this.memory.close();
  }
}
