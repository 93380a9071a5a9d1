// The physical plan: the bound tree cut into pipelines at every shuffle. A
// pipeline is a source (scan splits, a join or an aggregation over shuffled
// partitions, or a materialized sort/limit result) followed by row-wise
// operators; its tasks end in a sink chosen by the consumer.
import type { Field, Schema } from '../kernels/column.js';
import type { BoundNode, FileSplit } from '../plan/bound.js';
import { type Settings, plannedWorkers } from '../plan/load.js';
import type { RowOp, TaskResult, TaskSource } from './task.js';

export type SourceNode = Extract<
  BoundNode,
  { kind: 'scan' | 'join' | 'aggregate' | 'sort' | 'limit' | 'union' | 'values' | 'window' }
>;

export interface Pipeline<N extends SourceNode = SourceNode> {
  source: N;
  ops: RowOp[];
  /** ids of the filter/project nodes fused into this pipeline */
  fused: string[];
  schema: Schema;
}

/**
 * When a pipeline's scan tasks stop starting (ExecContext.executeUntil): asked after each task, in task order; once it
 * said yes, no task starts (a side read up to a cap, physical/join/broadcast.ts).
 */
export type StopRule = (r: TaskResult) => boolean;

/**
 * A pipeline run under a stop rule: its tasks' results in task order (those of the first splits, when it stopped) and
 * the pipeline that reads the splits not started (`null`: the run read everything).
 */
export interface Stopped {
  results: TaskResult[];
  rest: Pipeline | null;
}

/** The results of a run that read everything. */
export const readWhole = (results: TaskResult[]): Stopped => ({ results, rest: null });

export function pipelineOf(node: BoundNode): Pipeline {
  switch (node.kind) {
    case 'filter': {
      const p = pipelineOf(node.input);
      return {
        ...p,
        ops: [...p.ops, { kind: 'filter', pred: node.pred }],
        fused: [...p.fused, node.id],
        schema: node.schema,
      };
    }
    case 'project': {
      const p = pipelineOf(node.input);
      return {
        ...p,
        ops: [...p.ops, { kind: 'project', indices: node.indices }],
        fused: [...p.fused, node.id],
        schema: node.schema,
      };
    }
    case 'compute': {
      const p = pipelineOf(node.input);
      return {
        ...p,
        ops: [...p.ops, { kind: 'compute', exprs: node.exprs }],
        fused: [...p.fused, node.id],
        schema: node.schema,
      };
    }
    case 'expand':
    case 'repeat': {
      const p = pipelineOf(node.input);
      const op: RowOp =
        node.kind === 'expand'
          ? { kind: 'expand', copies: node.copies, types: node.schema.map((f) => f.type) }
          : { kind: 'repeat', col: node.col };
      return { ...p, ops: [...p.ops, op], fused: [...p.fused, node.id], schema: node.schema };
    }
    default:
      return { source: node, ops: [], fused: [], schema: node.schema };
  }
}

/** A map task's source for one scan split; `sample`: read at most that many of its rows. */
export function scanSource(s: FileSplit, fields: Field[], sample?: number): Extract<TaskSource, { kind: 'scan' }> {
  const range =
    s.offset !== undefined
      ? { offset: s.offset, limit: Math.min(s.rows, sample ?? Infinity) }
      : sample
        ? { limit: sample }
        : {};
  const csv = s.csv ? { csv: s.csv } : {};
  return { kind: 'scan', path: s.path, rowGroups: s.rowGroups, wholeFile: s.wholeFile, fields, ...range, ...csv };
}

/** Estimated bytes read by the scans under a node, to size the shuffles. */
export function scanBytes(node: BoundNode): number {
  switch (node.kind) {
    case 'scan':
      return node.splits.reduce((s, x) => s + x.bytes, 0);
    case 'join':
      return scanBytes(node.left) + scanBytes(node.right);
    case 'union':
      return node.inputs.reduce((s, n) => s + scanBytes(n), 0);
    case 'values':
      return 0;
    default:
      return scanBytes(node.input);
  }
}

/**
 * Partitions of the shuffle below a node: the plan's setting, or enough for
 * the workers at about 8 MB each, at most 256.
 */
export function partitionsFor(
  node: BoundNode,
  settings: Pick<Settings, 'partitions' | 'workers' | 'planWorkers'>,
): number {
  return (
    settings.partitions ??
    Math.min(256, Math.max(2 * plannedWorkers(settings), Math.ceil(scanBytes(node) / (8 * 1024 * 1024))))
  );
}
