// Every operator family, one entry per kind of pipeline source: a kind without an operator does not compile.
// The scheduler runs a pipeline through this table; `--explain` describes it through the same one.
import { aggregateOperator } from './aggregate/operator.js';
import { joinOperator } from './join/operator.js';
import { limitOperator } from './limit/operator.js';
import type { PhysicalOperator } from './operator.js';
import type { SourceNode } from './pipeline.js';
import { scanOperator } from './scan/operator.js';
import { unionOperator, valuesOperator } from './setop/operator.js';
import { sortOperator } from './sort/operator.js';
import { windowOperator } from './window/operator.js';

type Operators = { [K in SourceNode['kind']]: PhysicalOperator<Extract<SourceNode, { kind: K }>> };

const OPERATORS: Operators = {
  scan: scanOperator,
  join: joinOperator,
  aggregate: aggregateOperator,
  sort: sortOperator,
  limit: limitOperator,
  window: windowOperator,
  union: unionOperator,
  values: valuesOperator,
};

/** The operator of a pipeline's source node. */
export function operatorOf<N extends SourceNode>(node: N): PhysicalOperator<N> {
  return OPERATORS[node.kind] as unknown as PhysicalOperator<N>;
}
