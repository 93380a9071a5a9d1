// A mismatching query made small: drop one part at a time (a WHERE or HAVING
// conjunct, an ON conjunct past the first key, a join, a select item with its
// GROUP BY key, DISTINCT, ORDER BY/LIMIT/OFFSET, an unused CTE) and keep the
// drop while the query still fails the same way; until no drop keeps it.
import { type Query, render } from './gen.js';

/** Each query one part smaller than `q`. */
function smaller(q: Query): Query[] {
  const out: Query[] = [];
  const without = <T>(xs: T[], i: number) => xs.filter((_, j) => j !== i);
  q.where.forEach((_, i) => out.push({ ...q, where: without(q.where, i) }));
  q.having.forEach((_, i) => out.push({ ...q, having: without(q.having, i) }));
  q.joins.forEach((j, i) => {
    for (let c = 1; c < j.on.length; c++) {
      const joins = q.joins.map((x, k) => (k === i ? { ...x, on: without(x.on, c) } : x));
      out.push({ ...q, joins });
    }
  });
  if (q.joins.length > 0) out.push({ ...q, joins: q.joins.slice(0, -1) });
  if (q.items.length > 1) {
    q.items.forEach((item, i) =>
      out.push({ ...q, items: without(q.items, i), groupBy: q.groupBy.filter((g) => g !== item) }),
    );
  }
  if (q.distinct) out.push({ ...q, distinct: false });
  if (q.offset !== null) out.push({ ...q, offset: null });
  if (q.limit !== null) out.push({ ...q, limit: null, offset: null });
  if (q.order !== null && q.limit === null) out.push({ ...q, order: null });
  return out.map((x) => {
    const rest = render({ ...x, ctes: [] });
    return { ...x, ctes: x.ctes.filter((c) => new RegExp(`\\b${c.name}\\b`).test(rest)) };
  });
}

/**
 * The smallest query found that still `fails` (at most `budget` tries): each round takes the first smaller
 * query that fails, until none does.
 */
export async function shrink(q: Query, fails: (q: Query) => Promise<boolean>, budget = 150): Promise<Query> {
  let best = q,
    tries = 0;
  for (;;) {
    let next: Query | null = null;
    for (const c of smaller(best)) {
      if (tries++ >= budget) return best;
      if (await fails(c)) {
        next = c;
        break;
      }
    }
    if (!next) return best;
    best = next;
  }
}
