// What a plan field should hold, with an example, for validation messages: the
// validator's own words ("Invalid input: expected object, received string")
// say neither what the field is for nor how to write it.

/** The value at a path of the plan object (undefined when absent). */
export function valueAt(root: unknown, p: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const k of p) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

/** A received value as the message shows it: JSON, cut to a readable length. */
export function shown(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** A name to put in an example: the string the user wrote, else a placeholder. */
const nameOr = (v: unknown, fallback: string) => JSON.stringify(typeof v === 'string' && v !== '' ? v : fallback);

/** Per field (and, for a list, per item): what it holds, with an example built from what was received. */
const FORMS: Record<string, { item?: (got: unknown) => string; whole: (got: unknown) => string }> = {
  by: {
    item: (g) => `a sort key such as { "column": ${nameOr(g, 'amount')}, "desc": true }`,
    whole: (g) => `a list of sort keys such as [{ "column": ${nameOr(g, 'amount')}, "desc": true }]`,
  },
  aggregates: {
    item: (g) =>
      `an aggregate such as { "fn": "sum", "column": ${nameOr(g, 'amount')}, "as": "total" }` +
      ' or { "fn": "count", "as": "n" }',
    whole: () => 'a list of aggregates such as [{ "fn": "sum", "column": "amount", "as": "total" }]',
  },
  groupBy: {
    item: () => 'a column name such as "region"',
    whole: (g) => `a list of column names such as [${nameOr(g, 'region')}] ([] for one group)`,
  },
  on: {
    item: (g) => `a pair [leftColumn, rightColumn] such as [${nameOr(g, 'cust_id')}, "id"]`,
    whole: () => 'a list of [leftColumn, rightColumn] pairs such as [["cust_id", "id"]]',
  },
  where: {
    whole: (g) =>
      'a predicate such as { "column": "amount", "cmp": ">", "value": 100 }' +
      (typeof g === 'string' ? ' (a plan is JSON, not SQL text)' : ''),
  },
  input: { whole: (g) => `an operator such as { "op": "scan", "source": ${nameOr(g, 'orders')} }` },
  left: { whole: (g) => `an operator such as { "op": "scan", "source": ${nameOr(g, 'orders')} }` },
  right: { whole: (g) => `an operator such as { "op": "scan", "source": ${nameOr(g, 'customers')} }` },
  query: { whole: (g) => `an operator such as { "op": "scan", "source": ${nameOr(g, 'orders')} }` },
  count: { whole: () => 'a whole number such as 10' },
  offset: { whole: () => 'a whole number such as 10' },
  output: { whole: (g) => `an object such as { "path": ${nameOr(g, 'out/result.parquet')} }` },
  execution: { whole: () => 'an object such as { "workers": 4, "memoryLimit": "4GB" }' },
  parquet: { whole: () => 'a file, a glob or a list of them, such as "data/orders/*.parquet"' },
  csv: { whole: () => 'a file, a glob or a list of them, such as "landing/orders-*.csv"' },
  sources: { whole: () => 'an object of named inputs such as { "orders": { "parquet": "data/orders/*.parquet" } }' },
};

/** `columns` depends on the operator: names to read (scan) or the columns to compute (project). */
function columnsForm(op: unknown, item: boolean, got: unknown): string {
  if (op === 'scan') {
    return item ? 'a column name such as "amount"' : `a list of column names such as [${nameOr(got, 'amount')}]`;
  }
  const one =
    'a column name, { "name": "new", "column": "old" } or { "name": "net", "expr": { "fn": "*", ' +
    '"args": [{ "column": "price" }, { "column": "qty" }] } }';
  return item ? one : `a list, each item ${one}`;
}

/**
 * What the field at `p` should hold, with an example, or undefined for a field not described here.
 * A path ending in an index describes the list's item.
 */
export function expectedAt(root: unknown, p: readonly PropertyKey[]): string | undefined {
  const item = typeof p[p.length - 1] === 'number';
  const keyAt = item ? p.length - 2 : p.length - 1;
  const key = p[keyAt];
  if (typeof key !== 'string') return undefined;
  const got = valueAt(root, p);
  // a source of `sources`: sources.NAME
  if (p.length === 2 && p[0] === 'sources' && !item) {
    return (
      `an input such as { "parquet": ${nameOr(got, 'data/orders.parquet')} } or { "csv": "data/orders.csv" } ` +
      '(a file, a glob or a list of them)'
    );
  }
  const list = valueAt(root, p.slice(0, keyAt + 1));
  // "on": ["a", "b"] for "on": [["a", "b"]]
  if (key === 'on' && item && Array.isArray(list) && list.length === 2 && list.every((x) => typeof x === 'string')) {
    return `a pair [leftColumn, rightColumn]: "on": [${JSON.stringify(list)}] joins on ${list[0]} = ${list[1]}`;
  }
  const parent = valueAt(root, p.slice(0, keyAt)) as { op?: unknown } | undefined;
  if (key === 'columns') return columnsForm(parent?.op, item, got);
  const form = FORMS[key];
  if (!form) return undefined;
  return item ? form.item?.(got) : form.whole(got);
}
