// The set operations' bound nodes in Spark SQL: a union of all rows is UNION ALL; literal rows are SELECTs of
// their cast literals; an expansion is one SELECT per copy (keys it lacks as typed nulls, its tag); a row repeated
// n times is exploded over sequence(1, n). Distinct unions, INTERSECT, EXCEPT, grouping sets and distinct
// aggregates arrive here already compiled onto these and aggregates (plan/bind-setops.ts, plan/bind-grouping.ts).
import type { BoundNode } from '../plan/bound.js';
import { col, expr, sparkType } from './lower-expr.js';

type SetOpNode = Extract<BoundNode, { kind: 'union' | 'values' | 'expand' | 'repeat' }>;

export function lowerSetOp(n: SetOpNode, lower: (m: BoundNode) => string): string {
  const cols = (w: number) => Array.from({ length: w }, (_, i) => col(i)).join(', ');
  switch (n.kind) {
    case 'union':
      return n.inputs.map((m) => `SELECT ${cols(n.schema.length)} FROM (${lower(m)}) t`).join(' UNION ALL ');
    case 'values': {
      const none = `SELECT ${n.schema.map((f, i) => `CAST(NULL AS ${sparkType(f.type)}) AS ${col(i)}`).join(', ')} WHERE false`;
      if (n.rows.length === 0) return none;
      return n.rows.map((r) => `SELECT ${r.map((e, i) => `${expr(e)} AS ${col(i)}`).join(', ')}`).join(' UNION ALL ');
    }
    case 'expand': {
      const from = `(${lower(n.input)}) t`;
      const tag = n.schema.length - 1;
      return n.copies
        .map(
          (c) =>
            `SELECT ${c.cols
              .map((j, i) => (j < 0 ? `CAST(NULL AS ${sparkType(n.schema[i].type)})` : col(j)) + ` AS ${col(i)}`)
              .join(', ')}, CAST(${c.tag} AS BIGINT) AS ${col(tag)} FROM ${from}`,
        )
        .join(' UNION ALL ');
    }
    case 'repeat': {
      const c = col(n.col);
      return (
        `SELECT ${cols(n.schema.length)} FROM (SELECT * FROM (${lower(n.input)}) t WHERE ${c} > 0) t ` +
        `LATERAL VIEW explode(sequence(1L, ${c})) r AS __sj_copy`
      );
    }
  }
}
