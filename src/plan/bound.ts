// The bound (logical) plan: the operator tree with every column resolved to an
// index and every output schema known. Immutable; run-time state lives elsewhere.
import type { DataType, Field, Schema } from '../kernels/column.js';
import type { AggregateFnName, JoinType } from './spec.js';

export type Literal = number | bigint | string | boolean | null;

export type BoundPredicate =
  | { kind: 'cmp'; col: number; op: '=' | '!=' | '<' | '<=' | '>' | '>='; value: Literal }
  | { kind: 'in'; col: number; values: Literal[] }
  | { kind: 'isNull'; col: number; isNull: boolean }
  | { kind: 'and' | 'or'; preds: BoundPredicate[] }
  | { kind: 'not'; pred: BoundPredicate };

/** How a key column is brought to a common form so that both sides hash and compare alike. */
export type KeyNorm =
  /** scale: timestamps of different units are multiplied to the finer unit */
  | { kind: 'int'; scale?: number }
  | { kind: 'float' }
  | { kind: 'str' }
  | { kind: 'bool' };

export interface BoundAggregate { fn: AggregateFnName; col: number; as: string; type: DataType }

/** A map task's input: row groups of one file (all of it when `wholeFile`). */
export interface FileSplit { path: string; rowGroups: number[]; rows: number; bytes: number; wholeFile?: boolean }

interface Base { id: string; schema: Schema }

export type BoundNode =
  | (Base & {
      kind: 'scan'; source: string; splits: FileSplit[];
      /** columns of a type the engine cannot read: an error only if the pruned plan still reads them */
      unreadable?: Record<string, { file: string; type: string }>;
    })
  | (Base & { kind: 'filter'; input: BoundNode; pred: BoundPredicate })
  | (Base & { kind: 'project'; input: BoundNode; indices: number[] })
  | (Base & {
      kind: 'join'; type: JoinType; left: BoundNode; right: BoundNode;
      leftKeys: number[]; rightKeys: number[]; leftNorms: KeyNorm[]; rightNorms: KeyNorm[];
    })
  | (Base & { kind: 'aggregate'; input: BoundNode; groupBy: number[]; aggs: BoundAggregate[] })
  | (Base & { kind: 'sort'; input: BoundNode; by: { col: number; desc: boolean; nullsFirst: boolean }[] })
  | (Base & { kind: 'limit'; input: BoundNode; count: number; offset: number });

export type { Field };
