// A shuffle join task's rows joined a probe block at a time: only the build side is concatenated, each probe
// block hashed, probed and consumed on its own, the matches aggregated through their row indices or gathered.
import { type Batch, Int32Scratch, type Schema, concatBatches, emptyBatch, rowCount } from '../../kernels/column.js';
import { type EmitPairs, JoinProbe } from '../../kernels/join.js';
import { buildKeys } from '../../kernels/keys.js';
import { JoinAggregator, type JoinShape } from '../../agg/joinagg.js';
import type { Combine } from '../../agg/combiner.js';
import { partialSchema } from '../../agg/partial.js';
import { type JoinSides, type Orientation, ProbeGroupedAggregate, orient } from './orient.js';
import { GatherSink } from './gather.js';
import { cutPairs } from '../../shuffle/cut-pairs.js';
import type { JoinPath } from '../stats.js';
import type { CutSink, Produced, TaskSource } from '../task.js';
import { joinMetrics } from './metrics.js';

export type JoinSource = Extract<TaskSource, { kind: 'join' }>;

/** Hashes of a probe block's keys live here: they are not needed after the block. */
const probeHashes = new Int32Scratch(1 << 16, 1 << 20);

/** Where a streamed join's matched pairs go: `add` with the left rows first. */
interface PairTarget {
  add(l: Batch, r: Batch, li: Int32Array, ri: Int32Array, n: number): void;
}

/**
 * The pair router of this thread's streamed joins (streamJoin is synchronous,
 * so one serves them all): the sink, the build side and the probe block of
 * the moment, and one `emit` created once. V8 drops the optimized code of a
 * closure created anew for every block at each full garbage collection, and
 * the probe path inlined into such closures cost 10-30 ms of compilation
 * again in every warm run (`--trace-opt`, skew benchmark).
 */
class PairRouter {
  sink: PairTarget | null = null;
  build: Batch | null = null;
  probe: Batch | null = null;
  buildLeft = false;
  chunks = 0;
  readonly emit: EmitPairs = (pi, bi, n) => {
    this.chunks++;
    if (this.buildLeft) this.sink!.add(this.build!, this.probe!, bi, pi, n);
    else this.sink!.add(this.probe!, this.build!, pi, bi, n);
  };

  /** Lets go of the task's batches and sink. */
  clear(): void {
    this.sink = null;
    this.build = null;
    this.probe = null;
  }
}
const ROUTER = new PairRouter();

/**
 * A join that concatenates only its build side: each probe block is hashed,
 * probed and consumed on its own, the matches going to the combiner
 * (aggregated through the row indices) or gathered into output batches. A
 * task over several partitions joins them one at a time, so each table is a
 * partition's (small enough to stay in cache), each partition oriented on
 * its own (physical/join/orient.ts). Null when a combiner is asked for that the
 * streaming form cannot serve.
 */
export function streamJoin(src: JoinSource, combine?: Combine, cut?: CutSink): Produced | null {
  const parts = src.parts ?? [[src.left.length, src.right.length]];
  const sides: JoinSides = {
    type: src.type,
    leftSchema: src.leftSchema,
    rightSchema: src.rightSchema,
    leftKeys: src.leftKeys,
    rightKeys: src.rightKeys,
  };
  const orientations: Orientation[] = [];
  let li = 0,
    ri = 0;
  for (const [nl, nr] of parts) {
    const o = orient(
      sides,
      rowCount(src.left.slice(li, (li += nl))),
      rowCount(src.right.slice(ri, (ri += nr))),
      combine,
    );
    if (!o) return null;
    orientations.push(o);
  }
  const states = combine ? partialSchema(combine.schema, combine.groupBy, combine.aggs) : null;
  // matches cut straight into ranges need every index on a row (no outer join's missing side)
  const cutHere = cut && (src.type === 'inner' || src.type === 'semi' || src.type === 'anti') ? cut : undefined;
  const gathered = combine ? null : new GatherSink(src.type !== 'semi' && src.type !== 'anti', cutHere !== undefined);
  const out: Batch[] = [];
  const built = { left: 0, right: 0 };
  li = 0;
  ri = 0;
  ROUTER.chunks = 0;
  let chunks = 0;
  try {
    for (let k = 0; k < parts.length; k++) {
      const [nl, nr] = parts[k];
      const left = src.left.slice(li, (li += nl)),
        right = src.right.slice(ri, (ri += nr));
      const part: Part = { left, right, o: orientations[k], combine, states, gathered };
      const b = joinPart(src, sides, part, out);
      built[orientations[k].buildLeft ? 'left' : 'right'] += b;
    }
  } finally {
    // a failed join too lets go of its batches
    chunks = ROUTER.chunks;
    ROUTER.clear();
  }
  const cutRows =
    gathered && cutHere
      ? cutPairs(
          gathered.pending,
          gathered.withRight,
          cutHere.by,
          cutHere.bounds,
          cutHere.nullSeed,
          cutHere.select,
          cutHere.spread !== false,
        )
      : undefined;
  if (gathered && !cutRows) {
    gathered.flush();
    out.push(...gathered.batches);
  }
  const join: JoinPath = {
    path: combine ? 'fused-aggregate' : 'gather',
    build: built.left > built.right ? 'left' : 'right',
    matchChunks: chunks,
    buildRows: built.left + built.right,
    ...(combine ? { grouped: orientations.some((o) => o.grouped === 'probe') ? 'probe' : 'build' } : {}),
  };
  return {
    batches: out,
    rows: rowCount(src.left) + rowCount(src.right),
    combined: combine !== undefined,
    metrics: joinMetrics(join),
    ...(cutRows ? { cut: cutRows } : {}),
  };
}

/** One partition of a streamed join task: its blocks of each side, how it is oriented, where matches go. */
interface Part {
  left: Batch[];
  right: Batch[];
  o: Orientation;
  combine?: Combine;
  states: Schema | null;
  gathered: GatherSink | null;
}

/**
 * One partition joined: its build side concatenated and hashed, each probe block probed on its own, the matches
 * routed to the aggregate (by the build side's groups or the probe's) or the gather sink; an aggregate's states
 * pushed to `out`. Returns the rows built.
 */
function joinPart(src: JoinSource, sides: JoinSides, part: Part, out: Batch[]): number {
  const { left, right, combine, states, gathered } = part;
  const { buildLeft, grouped } = part.o;
  const route = ROUTER;
  const build = buildLeft ? concatBatches(src.leftSchema, left) : concatBatches(src.rightSchema, right);
  const shape: JoinShape = { ...sides, groupedLeft: grouped === 'probe' ? !buildLeft : buildLeft };
  const byBuild =
    grouped === 'build' ? JoinAggregator.create(build, shape, combine!.groupBy, combine!.aggs, states!) : null;
  const byProbe = grouped === 'probe' ? new ProbeGroupedAggregate(shape, combine!, states!) : null;
  const joiner = new JoinProbe(
    src.type,
    buildLeft ? buildKeys(build, src.leftKeys, src.leftNorms) : buildKeys(build, src.rightKeys, src.rightNorms),
  );
  route.sink = byBuild ?? byProbe ?? gathered!;
  route.build = build;
  route.buildLeft = buildLeft;
  const probeKeys = buildLeft ? src.rightKeys : src.leftKeys,
    probeNorms = buildLeft ? src.rightNorms : src.leftNorms;
  for (const p of buildLeft ? right : left) {
    if (p.length === 0) continue;
    route.probe = p;
    joiner.probe(buildKeys(p, probeKeys, probeNorms, probeHashes.get(p.length)), route.emit);
    byProbe?.flush(p);
  }
  // right and full joins: the build rows no probe row matched
  if (src.type === 'right' || src.type === 'full') {
    const none = emptyBatch(buildLeft ? src.rightSchema : src.leftSchema);
    route.probe = none;
    joiner.finish(route.emit);
    byProbe?.flush(none);
  }
  if (byBuild) out.push(byBuild.finish());
  if (byProbe) out.push(byProbe.finish());
  return build.length;
}
