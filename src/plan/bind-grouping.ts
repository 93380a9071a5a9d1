// Aggregates beyond the plain ones, compiled onto plain aggregates when the plan is bound:
// - `filter`: the argument becomes CASE WHEN filter THEN argument END (count(*): of the literal 1);
// - `distinct` on min/max changes nothing; count(DISTINCT x) alone (one argument) is the engine's count_distinct,
//   whose skewed groups are split on (group, value) (skew/aggregate.ts);
// - sum/avg DISTINCT, or distinct aggregates of several arguments: two aggregates, the first by (groups, argument)
//   with the other aggregates' partial states, the second by the groups (so a hot group's distinct values are
//   spread by the first shuffle's hash, and the second's combiners reduce them per task); with several distinct
//   arguments, each argument's aggregates (and the plain ones) by the groups over the input read again, their
//   one-row-per-group results united and merged by the groups (no copy of each row per argument, as Spark's
//   Expand makes: 3x the rows through a four-key aggregate for two arguments);
// - `groupingSets`: when one set has every key (ROLLUP, CUBE) and no aggregate is DISTINCT, the rows are
//   aggregated by every key first (partial states, combiners before the shuffle), and that result, small, is
//   expanded once per set (the keys it lacks null) with the set's number as a tag and aggregated again by the
//   keys and the tag; otherwise the input rows themselves are expanded so, and aggregated once: one aggregate,
//   its input read once. grouping() is a constant per tag.
import { PlanError, jsonPath } from '../errors.js';
import { type DataType, type Field, typeName } from '../kernels/column.js';
import { bindExpr, bindPredicateExpr } from '../expr/bind.js';
import type { BoundExpr } from '../expr/types.js';
import type { BoundNode } from './bound.js';
import { reshape } from './bind-setops.js';
import type { AggregateFnName, AggregateNode, Expr } from './spec.js';
import { fingerprint } from './fingerprint.js';
import { AGGREGATES, unknownState } from '../agg/functions.js';

type P = (string | number)[];
type Fn = Exclude<AggregateFnName, 'count_distinct'>;
/** A plain aggregate of the input's named columns (plan/bind.ts). */
export type PlainAggregate = (
  input: BoundNode,
  groupBy: string[],
  aggs: { fn: AggregateFnName; column?: string; as: string; q?: number }[],
  id: string,
) => BoundNode;

/** Whether an aggregate node needs more than the plain aggregate. */
export const needsGrouping = (q: AggregateNode): boolean =>
  q.groupingSets !== undefined ||
  q.aggregates.some((a) => a.fn === 'grouping' || ('distinct' in a && a.distinct) || ('filter' in a && a.filter));

interface Spec {
  fn: Fn;
  /** the argument's column in the prepared input; null: count(*) */
  arg: string | null;
  distinct: boolean;
  as: string;
  /** quantiles' fraction */
  q?: number;
}

const TAG = '$tag';

export function bindGrouped(q: AggregateNode, at: P, id: string, input: BoundNode, plain: PlainAggregate): BoundNode {
  if (q.groupBy && q.groupingSets)
    throw new PlanError(jsonPath([...at, 'groupingSets']), 'give groupBy or groupingSets, not both');
  const keys = q.groupBy ?? [...new Set(q.groupingSets!.flat())];
  const keyAt = (k: number): P => {
    if (q.groupBy) return [...at, 'groupBy', k];
    const s = q.groupingSets!.findIndex((set) => set.includes(keys[k]));
    return [...at, 'groupingSets', s, q.groupingSets![s].indexOf(keys[k])];
  };
  const keyCols = keys.map((k, i) => {
    const j = input.schema.findIndex((f) => f.name === k);
    if (j < 0)
      throw new PlanError(
        jsonPath(keyAt(i)),
        `column "${k}" not found in input; columns are: ${input.schema.map((f) => f.name).join(', ')}`,
      );
    return j;
  });
  // the prepared input: the keys, then each argument once ($a0, ...; the literal 1 for count(*))
  const exprs: BoundExpr[] = [],
    indices = [...keyCols],
    schema: Field[] = keyCols.map((j) => input.schema[j]);
  const byText = new Map<string, string>();
  const column = (e: BoundExpr): string => {
    const text = fingerprint({ e } as never);
    let name = byText.get(text);
    if (!name) {
      name = `$a${byText.size}`;
      byText.set(text, name);
      if (e.k === 'col') indices.push(e.col);
      else {
        exprs.push(e);
        indices.push(input.schema.length + exprs.length - 1);
      }
      schema.push({ name, type: e.type });
    }
    return name;
  };
  const specs: (Spec | { grouping: string[]; as: string; at: P })[] = q.aggregates.map((a, i) => {
    const ai: P = [...at, 'aggregates', i];
    if (a.fn === 'grouping') {
      a.columns.forEach((c, k) => {
        if (!keys.includes(c))
          throw new PlanError(jsonPath([...ai, 'columns', k]), `grouping(): "${c}" is not a group key`);
      });
      return { grouping: a.columns, as: a.as, at: ai };
    }
    const raw: Expr | null = 'expr' in a ? a.expr : a.column !== undefined ? { column: a.column } : null;
    if (raw === null && a.fn !== 'count') throw new PlanError(jsonPath([...ai, 'column']), `${a.fn} needs a column`);
    const fn: Fn = a.fn === 'count_distinct' ? 'count' : a.fn;
    // DISTINCT changes no extreme: dropped there
    const distinct = (a.fn === 'count_distinct' || a.distinct === true) && AGGREGATES[fn].state?.kind !== 'extreme';
    if (distinct && raw === null) throw new PlanError(jsonPath([...ai, 'column']), `${a.fn} DISTINCT needs a column`);
    const argAt: P = 'expr' in a ? [...ai, 'expr'] : ai;
    let arg = raw && bindExpr(raw, input.schema, argAt);
    if (arg && AGGREGATES[fn].type(arg.type) === null)
      throw new PlanError(
        jsonPath('expr' in a ? argAt : [...ai, 'column']),
        `${fn} needs ${AGGREGATES[fn].needs}; ${'expr' in a ? 'the expression' : `"${a.column}"`} is ${typeName(arg.type)}`,
      );
    if (a.filter) {
      // FILTER (WHERE p): the argument where p is true, else null (count(*): of the literal 1)
      const then = arg ?? ({ k: 'lit', value: 1n, type: { id: 'int64' } } as const);
      const when = bindPredicateExpr(a.filter, input.schema, [...ai, 'filter']);
      arg = { k: 'case', whens: [when], thens: [then], else: null, type: then.type };
    }
    return { fn, arg: arg ? column(arg) : null, distinct, as: a.as, ...(a.q !== undefined ? { q: a.q } : {}) };
  });
  const aggSpecs = specs.filter((s): s is Spec => 'fn' in s);
  const sets = q.groupingSets;
  // an empty grouping set has its row even over no input rows (SQL's grand total: count 0, the rest null): one
  // row more in its group whose arguments are all null, so count(*) counts the literal 1 (null in that row)
  const totals = sets?.some((set) => set.length === 0) ?? false;
  // the sets nest in one that has every key (ROLLUP, CUBE) and no aggregate is DISTINCT: see below
  const nested =
    sets !== undefined && aggSpecs.every((s) => !s.distinct) && sets.some((set) => keys.every((k) => set.includes(k)));
  // Nested, count(*) stays count(*) at the first level: the empty set's row comes after it, its partial count null
  // (and summed to null, then 0). Without a literal column of ones, ROLLUP's first level ships 8 bytes a row fewer
  // through its shuffle and counts no column (JCC-H SF 10, 60M rows by (l_suppkey, l_returnflag)).
  const countStar =
    !nested && (aggSpecs.some((s) => s.arg === null) || totals)
      ? column({ k: 'lit', value: 1n, type: { id: 'int64' } })
      : null;
  if (totals && !nested) for (const s of aggSpecs) s.arg ??= countStar;
  const prepared = reshape(input, exprs, indices, schema, `${id}.args`);
  let aggregated: BoundNode;
  if (nested) {
    // the sets nest in one that has every key (ROLLUP, CUBE): aggregated by every key first (combiners before
    // its shuffle), the coarser sets then from that result's copies, with the partial states combined
    const { partial, final, out } = decompose(aggSpecs, countStar);
    const level1 = plain(prepared, keys, partial, `${id}.partial`);
    const level2 = plain(expandSets(level1, keys, sets, totals, id), [...keys, TAG], final, `${id}.agg`);
    aggregated = finish(level2, keys.length + 1, aggSpecs, out, id);
  } else if (sets) {
    aggregated = aggregateSpecs(
      expandSets(prepared, keys, sets, totals, id),
      [...keys, TAG],
      aggSpecs,
      countStar,
      id,
      plain,
    );
  } else aggregated = aggregateSpecs(prepared, keys, aggSpecs, countStar, id, plain);
  // the output: the keys, then each aggregate (grouping(): a constant per grouping set)
  const outExprs: BoundExpr[] = [];
  const outIdx = keys.map((_, j) => j);
  const outSchema: Field[] = keys.map((_, j) => aggregated.schema[j]);
  for (const s of specs) {
    if ('fn' in s) {
      const j = aggregated.schema.findIndex((f) => f.name === s.as);
      outIdx.push(j);
      outSchema.push(aggregated.schema[j]);
      continue;
    }
    const bits = (set: string[]) => s.grouping.reduce((v, c) => v * 2 + (set.includes(c) ? 0 : 1), 0);
    const e: Expr = sets
      ? {
          case: sets.map((set, k) => ({
            when: { column: TAG, cmp: '=' as const, value: k },
            then: { value: bits(set) },
          })),
        }
      : { value: 0 };
    const b = bindExpr(e, aggregated.schema, s.at);
    outExprs.push(b);
    outIdx.push(aggregated.schema.length + outExprs.length - 1);
    outSchema.push({ name: s.as, type: b.type });
  }
  const seen = new Set<string>();
  outSchema.forEach((f, k) => {
    if (seen.has(f.name))
      throw new PlanError(jsonPath([...at, 'aggregates', k - keys.length]), `duplicate output column "${f.name}"`);
    seen.add(f.name);
  });
  return reshape(aggregated, outExprs, outIdx, outSchema, id);
}

/**
 * One copy of each row of `n` (its first columns the keys) per grouping set, the keys the set lacks null, tagged
 * by the set's number; with an empty set, one row more per empty set whose columns but the tag are all null (so
 * that set has its row over no input rows).
 */
function expandSets(n: BoundNode, keys: string[], sets: string[][], totals: boolean, id: string): BoundNode {
  const copies = sets.map((set, s) => ({
    cols: n.schema.map((_, j) => (j < keys.length && !set.includes(keys[j]) ? -1 : j)),
    tag: s,
  }));
  const tagged: Field[] = [...n.schema, { name: TAG, type: { id: 'int64' } }];
  const expanded: BoundNode = { id: `${id}.sets`, kind: 'expand', input: n, copies, schema: tagged };
  if (!totals) return expanded;
  const rows = sets.flatMap((set, s): BoundExpr[][] =>
    set.length > 0
      ? []
      : [tagged.map((f, j) => ({ k: 'lit', value: j === tagged.length - 1 ? BigInt(s) : null, type: f.type }))],
  );
  const empty: BoundNode = { id: `${id}.totals`, kind: 'values', rows, schema: tagged };
  return { id: `${id}.sets.all`, kind: 'union', inputs: [expanded, empty], schema: tagged };
}

/**
 * The aggregates by `groupBy` over `input`, one column each named as the spec says after the group columns.
 * Without DISTINCT, or with count(DISTINCT x) of one argument only: one plain aggregate; one distinct argument:
 * two levels; several: byArgument.
 */
function aggregateSpecs(
  input: BoundNode,
  groupBy: string[],
  specs: Spec[],
  countStar: string | null,
  id: string,
  plain: PlainAggregate,
): BoundNode {
  const distinct = [...new Set(specs.filter((s) => s.distinct).map((s) => s.arg!))];
  const simple =
    distinct.length === 0 || (distinct.length === 1 && specs.every((s) => !s.distinct || s.fn === 'count'));
  if (simple) {
    const aggs = specs.map((s) => ({
      fn: s.distinct ? ('count_distinct' as const) : s.fn,
      ...(s.arg !== null ? { column: s.arg } : {}),
      as: s.as,
      ...(s.q !== undefined ? { q: s.q } : {}),
    }));
    return plain(input, groupBy, aggs, id.endsWith('.agg') ? id : `${id}.agg`);
  }
  // a holistic function (median) has no partial state for level 2: it is aggregated apart, as a plain aggregate
  if (distinct.length > 1 || specs.some((s) => !s.distinct && AGGREGATES[s.fn].state === null))
    return byArgument(input, groupBy, specs, distinct, countStar, id, plain);
  // one distinct argument: level 1 by (groups, argument), the partial states of the other aggregates
  const level1By = [...groupBy, ...distinct];
  const { partial, final, out } = decompose(specs, countStar);
  const level1 = plain(input, level1By, partial, `${id}.partial`);
  return finish(plain(level1, groupBy, final, `${id}.agg`), groupBy.length, specs, out, id);
}

/**
 * Distinct aggregates of several arguments (`distinct`, each once): the aggregates of each argument (and the plain ones, with an argument
 * that only has distinct counts or else apart) by the groups over a copy of the input of their own (each as aggregateSpecs does it for one argument: a hot group split on
 * (group, value)), their results widened to every aggregate's column (the others null) and united, then one row
 * per group: each column's one value (max of it and nulls). The input is read once per argument, no row is
 * copied, and each first aggregate groups by one argument only.
 */
function byArgument(
  input: BoundNode,
  groupBy: string[],
  specs: Spec[],
  distinct: string[],
  countStar: string | null,
  id: string,
  plain: PlainAggregate,
): BoundNode {
  const plainOnes = specs.filter((s) => !s.distinct);
  const byArg = distinct.map((d) => specs.filter((s) => s.distinct && s.arg === d));
  // the plain aggregates ride along with an argument that only has distinct counts (one aggregate, count_distinct
  // beside them), else they are an aggregate of their own
  const host = plainOnes.length > 0 ? byArg.findIndex((own) => own.every((s) => s.fn === 'count')) : -1;
  const owners = (
    host >= 0 ? byArg.map((own, k) => (k === host ? [...own, ...plainOnes] : own)) : [plainOnes, ...byArg]
  ).filter((own) => own.length > 0);
  const g = groupBy.length;
  const parts = owners.map((own, k) => ({
    own,
    node: aggregateSpecs(relabel(input, `.by${k}`), groupBy, own, countStar, `${id}.by${k}`, plain),
  }));
  const typeOf = new Map<Spec, DataType>();
  for (const { own, node } of parts) own.forEach((s, j) => typeOf.set(s, node.schema[g + j].type));
  const schema: Field[] = [
    ...parts[0].node.schema.slice(0, g),
    ...specs.map((s) => ({ name: s.as, type: typeOf.get(s)! })),
  ];
  const inputs = parts.map(({ own, node }) => {
    const exprs: BoundExpr[] = [];
    const indices = groupBy.map((_, j) => j);
    for (const s of specs) {
      const j = own.indexOf(s);
      if (j >= 0) indices.push(g + j);
      else {
        exprs.push({ k: 'lit', value: null, type: typeOf.get(s)! });
        indices.push(node.schema.length + exprs.length - 1);
      }
    }
    return reshape(node, exprs, indices, schema, `${node.id}.wide`);
  });
  const parted: BoundNode = { id: `${id}.parts`, kind: 'union', inputs, schema };
  return plain(
    parted,
    groupBy,
    specs.map((s) => ({ fn: 'max', column: s.as, as: s.as })),
    `${id}.agg`,
  );
}

/** A copy of a subtree with `suffix` appended to each node's id (so each copy's stages and statistics are its own). */
function relabel(n: BoundNode, suffix: string): BoundNode {
  const c = { ...n, id: `${n.id}${suffix}` } as BoundNode;
  if ('input' in c) c.input = relabel(c.input, suffix);
  if (c.kind === 'join') {
    c.left = relabel(c.left, suffix);
    c.right = relabel(c.right, suffix);
  }
  if (c.kind === 'union') c.inputs = c.inputs.map((x) => relabel(x, suffix));
  return c;
}

/**
 * The aggregates split in two levels: the first's partial states (distinct ones: none, the argument is grouped by),
 * the second's functions of them, and each aggregate's value from the second's columns.
 */
function decompose(specs: Spec[], countStar: string | null) {
  const partial: { fn: AggregateFnName; column?: string; as: string; q?: number }[] = [];
  const final: { fn: AggregateFnName; column?: string; as: string; q?: number }[] = [];
  const out: Expr[] = [];
  specs.forEach((s, i) => {
    // null: count(*) (nested grouping sets, where the first level sees no row of an empty set's)
    const arg = s.arg ?? countStar ?? undefined;
    const st = AGGREGATES[s.fn].state;
    if (s.distinct) {
      final.push({ fn: s.fn, column: arg, as: `$r${i}`, ...(s.q !== undefined ? { q: s.q } : {}) });
      out.push({ column: `$r${i}` });
      return;
    }
    // by the function's partial state (agg/functions.ts); holistic ones never come here (aggregateSpecs)
    if (st === null || st.kind === 'distinct') throw new Error(`internal: ${s.fn} has no partial state to split`);
    switch (st.kind) {
      case 'sum':
        if (st.avg) {
          partial.push({ fn: 'sum', column: arg, as: `$p${i}` }, { fn: 'count', column: arg, as: `$q${i}` });
          final.push({ fn: 'sum', column: `$p${i}`, as: `$r${i}` }, { fn: 'sum', column: `$q${i}`, as: `$s${i}` });
          out.push({ fn: '/', args: [{ column: `$r${i}` }, { column: `$s${i}` }] });
        } else {
          partial.push({ fn: s.fn, column: arg, as: `$p${i}` });
          final.push({ fn: s.fn, column: `$p${i}`, as: `$r${i}` });
          out.push({ column: `$r${i}` });
        }
        break;
      case 'count':
        partial.push({ fn: s.fn, ...(arg !== undefined ? { column: arg } : {}), as: `$p${i}` });
        final.push({ fn: 'sum', column: `$p${i}`, as: `$r${i}` });
        // a count of no rows at all (no group, an empty input): 0
        out.push({ fn: 'coalesce', args: [{ column: `$r${i}` }, { value: 0 }] });
        break;
      case 'extreme':
        partial.push({ fn: s.fn, column: arg, as: `$p${i}` });
        final.push({ fn: s.fn, column: `$p${i}`, as: `$r${i}` });
        out.push({ column: `$r${i}` });
        break;
      default:
        unknownState(st);
    }
  });
  return { partial, final, out };
}

/** The second level's group columns (the first g), then each aggregate named as its spec says. */
function finish(level2: BoundNode, g: number, specs: Spec[], out: Expr[], id: string): BoundNode {
  const exprs = out.map((e, i) => bindExpr(e, level2.schema, ['query', id, 'aggregates', i]));
  return reshape(
    level2,
    exprs,
    [...level2.schema.slice(0, g).map((_, j) => j), ...exprs.map((_, k) => level2.schema.length + k)],
    [...level2.schema.slice(0, g), ...specs.map((s, k) => ({ name: s.as, type: exprs[k].type }))],
    `${id}.final`,
  );
}
