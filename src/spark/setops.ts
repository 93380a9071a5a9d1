// The set operations' bound nodes in Spark SQL: a union of all rows is UNION ALL; literal rows are SELECTs of
// their cast literals; an expansion is one SELECT per copy (keys it lacks as typed nulls, its tag); a row repeated
// n times is exploded over sequence(1, n). Distinct unions, INTERSECT, EXCEPT, grouping sets and distinct
// aggregates arrive here already compiled onto these and aggregates (plan/bind-setops.ts, plan/bind-grouping.ts).
import type { BoundNode } from '../plan/bound.js';
import { expr, sparkType } from './lower-expr.js';

type SetOpNode = Extract<BoundNode, { kind: 'union' | 'values' | 'expand' | 'repeat' }>;

/**
 * A set operation's node; `lower` lowers an input, `names` gives a node's column names in the SQL (the input's,
 * and `n`'s own for its output).
 */
export function lowerSetOp(
  n: SetOpNode,
  lower: (m: BoundNode) => string,
  names: (m: BoundNode) => readonly string[],
): string {
  const out = names(n);
  const as = (c: string, i: number) => (c === out[i] ? c : `${c} AS ${out[i]}`);
  switch (n.kind) {
    case 'union':
      return n.inputs.map((m) => `SELECT ${names(m).map(as).join(', ')} FROM (${lower(m)}) t`).join(' UNION ALL ');
    case 'values': {
      const none = `SELECT ${n.schema.map((f, i) => `CAST(NULL AS ${sparkType(f.type)}) AS ${out[i]}`).join(', ')} WHERE false`;
      if (n.rows.length === 0) return none;
      return n.rows.map((r) => `SELECT ${r.map((e, i) => `${expr(e)} AS ${out[i]}`).join(', ')}`).join(' UNION ALL ');
    }
    case 'expand': {
      const from = `(${lower(n.input)}) t`;
      const inn = names(n.input);
      const tag = n.schema.length - 1;
      return n.copies
        .map(
          (c) =>
            `SELECT ${c.cols
              .map((j, i) => (j < 0 ? `CAST(NULL AS ${sparkType(n.schema[i].type)}) AS ${out[i]}` : as(inn[j], i)))
              .join(', ')}, CAST(${c.tag} AS BIGINT) AS ${out[tag]} FROM ${from}`,
        )
        .join(' UNION ALL ');
    }
    case 'repeat': {
      // the input's columns, under the input's names
      const c = names(n.input)[n.col];
      return (
        `SELECT ${out.join(', ')} FROM (SELECT * FROM (${lower(n.input)}) t WHERE ${c} > 0) t ` +
        `LATERAL VIEW explode(sequence(1L, ${c})) r AS __sj_copy`
      );
    }
  }
}
