// plan.json version 1 (shared/PLAN-SPEC.md) as one zod schema: the TypeScript
// types, the validator and plans/plan.schema.json all come from here.
// A namespace import, so that the bundler keeps only the parts used: `import { z }` pulled in all
// of zod's ~50 locales and its JSON Schema reader (the command line's shared chunk 995 -> 444 KB;
// paired, loaded machine, 11 runs: the quick start 962 -> 771 ms wall, 830 -> 670 ms CPU).
import * as z from 'zod';
import { OUTPUT_FORMATS } from './formats.js';

const name = z.string().min(1);
const literal = z.union([z.number(), z.string(), z.boolean(), z.null()]);
/** A plan parameter, replaced by its value before validation (src/plan/params.ts); one left at binding is an error. */
const Param = z.strictObject({ param: name });
/** Where a literal may stand: a JSON value or a parameter. */
const literalOrParam = z.union([literal, Param]);

const TYPE_NAMES = [
  'bool',
  'int8',
  'int16',
  'int32',
  'int64',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
  'float32',
  'float64',
  'decimal(p,s)',
  'utf8',
  'date',
  'timestamp',
] as const;
const TypeName = z
  .string()
  .regex(
    /^\s*(bool|u?int(8|16|32|64)|float(32|64)|decimal\s*\(\s*\d+\s*,\s*\d+\s*\)|utf8|date|timestamp)\s*$/,
    `expected a type name: ${TYPE_NAMES.join(', ')}`,
  );

const CMP = ['=', '!=', '<', '<=', '>', '>='] as const;

export type Expr =
  | { column: string }
  | { value: string | number | boolean | null; type?: string }
  | { param: string }
  | { fn: string; args?: Expr[] }
  | { case: { when: Predicate; then: Expr }[]; else?: Expr }
  | { cast: Expr; to: string };

const ExprSchema: z.ZodType<Expr> = z
  .lazy(() =>
    z.union([
      z.strictObject({ column: name }),
      z.strictObject({ value: literal, type: TypeName.optional() }),
      Param,
      z.strictObject({ fn: name, args: z.array(ExprSchema).optional() }),
      z.strictObject({
        case: z.array(z.strictObject({ when: PredicateSchema, then: ExprSchema })).min(1),
        else: ExprSchema.optional(),
      }),
      z.strictObject({ cast: ExprSchema, to: TypeName }),
    ]),
  )
  .meta({ id: 'Expr' });

/** A literal, a parameter or an expression (`like` patterns, `between` bounds). */
const operand = z.union([literal, ExprSchema]);
type Operand = string | number | boolean | null | Expr;
type Subject = { column: string } | { expr: Expr };
type Lit = string | number | boolean | null | { param: string };

// Each predicate form reads a column or an expression (`expr` wherever `column` stands).
const subjects = <T extends z.ZodRawShape>(shape: T) =>
  [z.strictObject({ column: name, ...shape }), z.strictObject({ expr: ExprSchema, ...shape })] as const;
const Cmp = subjects({ cmp: z.enum(CMP), value: literalOrParam });
const In = subjects({ in: z.array(literalOrParam) });
const IsNull = subjects({ isNull: z.boolean() });
const Like = subjects({ like: operand });
const Between = subjects({ between: z.tuple([operand, operand]) });
const Compare = z.strictObject({ left: ExprSchema, cmp: z.enum(CMP), right: ExprSchema });

type CmpOp = (typeof CMP)[number];
export type Predicate =
  | (Subject & { cmp: CmpOp; value: Lit })
  | (Subject & { in: Lit[] })
  | (Subject & { isNull: boolean })
  | (Subject & { like: Operand })
  | (Subject & { between: [Operand, Operand] })
  | { left: Expr; cmp: CmpOp; right: Expr }
  | { and: Predicate[] }
  | { or: Predicate[] }
  | { not: Predicate };

const PredicateSchema: z.ZodType<Predicate> = z
  .lazy(() =>
    z.union([
      ...Cmp,
      ...In,
      ...IsNull,
      ...Like,
      ...Between,
      Compare,
      z.strictObject({ and: z.array(PredicateSchema).min(1) }),
      z.strictObject({ or: z.array(PredicateSchema).min(1) }),
      z.strictObject({ not: PredicateSchema }),
    ]),
  )
  .meta({ id: 'Predicate' });

const ProjectColumn = z.union([
  name,
  z.strictObject({ name, column: name }),
  z.strictObject({ name, expr: ExprSchema }),
]);
// each one's types, states and lowering: agg/functions.ts
const AggregateFn = z.enum([
  'count',
  'sum',
  'min',
  'max',
  'avg',
  'count_distinct',
  'median',
  'quantile_cont',
  'quantile_disc',
]);
// set operations and aggregate options (plan/bind-setops.ts, plan/bind-grouping.ts)
const aggOptions = {
  distinct: z.boolean().optional(),
  filter: z.lazy(() => PredicateSchema).optional(),
  /** quantile_cont, quantile_disc: the fraction, 0 to 1 */
  q: z.number().min(0).max(1).optional(),
};
const AggregateSpec = z.union([
  z.strictObject({ fn: AggregateFn, column: name.optional(), as: name, ...aggOptions }),
  z.strictObject({ fn: AggregateFn, expr: ExprSchema, as: name, ...aggOptions }),
  /** SQL's grouping(): a bit per column, 1 where the row's grouping set lacks it (the first column the highest) */
  z.strictObject({ fn: z.literal('grouping'), columns: z.array(name).min(1), as: name }),
]);
const SortKey = z.strictObject({
  column: name,
  desc: z.boolean().optional(),
  nulls: z.enum(['first', 'last']).optional(),
});
// window (PLAN-SPEC "Operators", Windows): functions over a partition's rows in orderBy order, over a frame
const WINDOW_FNS = [
  'row_number',
  'rank',
  'dense_rank',
  'percent_rank',
  'cume_dist',
  'ntile',
  'lag',
  'lead',
  'first_value',
  'last_value',
  'nth_value',
  'count',
  'sum',
  'avg',
  'min',
  'max',
] as const;
const FrameBound = z.union([
  z.enum(['unbounded preceding', 'current row', 'unbounded following']),
  z.strictObject({ preceding: z.number().int().min(0) }),
  z.strictObject({ following: z.number().int().min(0) }),
]);
const WindowFrame = z.strictObject({ unit: z.enum(['rows', 'range']), start: FrameBound, end: FrameBound });
const windowFnFields = {
  fn: z.enum(WINDOW_FNS),
  as: name,
  frame: WindowFrame.optional(),
  n: z.number().int().optional(),
  offset: z.number().int().min(0).optional(),
  default: literal.optional(),
  /** count, sum, avg, min, max over the distinct non-null values of the frame (SQL's fn(DISTINCT x) OVER) */
  distinct: z.boolean().optional(),
};
const WindowFnSpec = z.union([
  z.strictObject({ ...windowFnFields, column: name.optional() }),
  z.strictObject({ ...windowFnFields, expr: ExprSchema }),
]);
export type WindowFnName = (typeof WINDOW_FNS)[number];
export type WindowFrameSpec = z.infer<typeof WindowFrame>;
export type WindowFnSpec = z.infer<typeof WindowFnSpec>;

const JOIN_TYPES = ['inner', 'left', 'right', 'full', 'semi', 'anti'] as const;

export type ScanNode = { op: 'scan'; source: string; columns?: string[] };
export type FilterNode = { op: 'filter'; input: QueryNode; where: Predicate };
export type ProjectNode = { op: 'project'; input: QueryNode; columns: z.infer<typeof ProjectColumn>[] };
export type JoinType = (typeof JOIN_TYPES)[number];
export type JoinNode = {
  op: 'join';
  type: JoinType;
  left: QueryNode;
  right: QueryNode;
  on: [string, string][];
  /** false: the engine keeps this join as written (its inputs joined here), not reordered by cost (plan/join-order.ts) */
  reorder?: boolean;
};
export type AggregateNode = {
  op: 'aggregate';
  input: QueryNode;
  groupBy?: string[];
  /** instead of groupBy: one grouping per set, the keys a set lacks null (SQL's ROLLUP, CUBE, GROUPING SETS) */
  groupingSets?: string[][];
  aggregates: z.infer<typeof AggregateSpec>[];
};
export type SortNode = { op: 'sort'; input: QueryNode; by: z.infer<typeof SortKey>[] };
export type LimitNode = { op: 'limit'; input: QueryNode; count: number; offset?: number };
export type WindowNode = {
  op: 'window';
  input: QueryNode;
  partitionBy: string[];
  orderBy?: z.infer<typeof SortKey>[];
  functions: WindowFnSpec[];
};
export type UnionNode = { op: 'union'; inputs: QueryNode[]; all?: boolean };
export type SetOpNode = { op: 'intersect' | 'except'; left: QueryNode; right: QueryNode; all?: boolean };
type Cell = string | number | boolean | null | { value: string | number | boolean | null; type: string };
export type ValuesNode = {
  op: 'values';
  columns: string[];
  rows: Cell[][];
  types?: string[];
};
export type QueryNode =
  | ScanNode
  | FilterNode
  | ProjectNode
  | JoinNode
  | AggregateNode
  | SortNode
  | LimitNode
  | WindowNode
  | UnionNode
  | SetOpNode
  | ValuesNode;
export type AggregateFnName = z.infer<typeof AggregateFn>;

const QueryNodeSchema: z.ZodType<QueryNode> = z
  .lazy(() =>
    z.discriminatedUnion('op', [
      z.strictObject({ op: z.literal('scan'), source: name, columns: z.array(name).optional() }),
      z.strictObject({ op: z.literal('filter'), input: QueryNodeSchema, where: PredicateSchema }),
      z.strictObject({ op: z.literal('project'), input: QueryNodeSchema, columns: z.array(ProjectColumn).min(1) }),
      z.strictObject({
        op: z.literal('join'),
        type: z.enum(JOIN_TYPES),
        left: QueryNodeSchema,
        right: QueryNodeSchema,
        /** empty with type inner: a cross join */
        on: z.array(z.tuple([name, name])),
        /** an inner join: false keeps it as written (default: the engine may reorder inner joins by cost) */
        reorder: z.boolean().optional(),
      }),
      z.strictObject({
        op: z.literal('aggregate'),
        input: QueryNodeSchema,
        groupBy: z.array(name).optional(),
        groupingSets: z.array(z.array(name)).min(1).optional(),
        aggregates: z.array(AggregateSpec),
      }),
      z.strictObject({ op: z.literal('sort'), input: QueryNodeSchema, by: z.array(SortKey).min(1) }),
      z.strictObject({
        op: z.literal('limit'),
        input: QueryNodeSchema,
        count: z.number().int().min(0),
        offset: z.number().int().min(0).optional(),
      }),
      z.strictObject({
        op: z.literal('window'),
        input: QueryNodeSchema,
        partitionBy: z.array(name),
        orderBy: z.array(SortKey).optional(),
        functions: z.array(WindowFnSpec).min(1),
      }),
      // set operations and literal tables (plan/bind-setops.ts)
      z.strictObject({ op: z.literal('union'), inputs: z.array(QueryNodeSchema).min(2), all: z.boolean().optional() }),
      ...(['intersect', 'except'] as const).map((op) =>
        z.strictObject({
          op: z.literal(op),
          left: QueryNodeSchema,
          right: QueryNodeSchema,
          all: z.boolean().optional(),
        }),
      ),
      z.strictObject({
        op: z.literal('values'),
        columns: z.array(name).min(1),
        /** a cell: a literal, or one of a named type (`{ "value": "1.5", "type": "decimal(2,1)" }`) */
        rows: z.array(z.array(z.union([literal, z.strictObject({ value: literal, type: TypeName })]))),
        types: z.array(TypeName).optional(),
      }),
    ]),
  )
  .meta({ id: 'QueryNode' });

/** A byte size: a number of bytes, or a string such as "64KB", "256MB", "1GB". */
const ByteSize = z.union([
  z.number().nonnegative(),
  z
    .string()
    .regex(
      /^\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?\s*$/i,
      'expected a size such as "64KB", "256MB" or "1GB"',
    ),
]);

const SkewOptionsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  factor: z.number().positive().optional(),
  thresholdBytes: ByteSize.optional(),
  advisoryPartitionBytes: ByteSize.optional(),
  strategy: z.enum(['auto', 'partition', 'key']).optional(),
});

const ExecutionSchema = z.strictObject({
  workers: z.number().int().min(1).max(256).optional(),
  partitions: z.number().int().min(1).max(65536).optional(),
  combiners: z.boolean().optional(),
  /** partial aggregation below joins (eager aggregation); needs combiners; default true */
  eagerAggregation: z.boolean().optional(),
  skew: SkewOptionsSchema.optional(),
  memoryLimit: ByteSize.optional(),
  /**
   * a join side at most this big (after its own filters and projections, measured at run time) is broadcast; 0: never
   */
  broadcastBytes: ByteSize.optional(),
  /**
   * runtime join filters: a side built once sends a filter of its keys into the other side's scan (auto: a bitmap
   * where the keys are dense integers, else a Bloom filter, min/max for an integer key); off; or one kind forced
   */
  runtimeFilters: z.enum(['auto', 'off', 'bitmap', 'bloom', 'minmax']).optional(),
  /** inputs up to this many Parquet bytes run on the calling thread, without workers; 0: always the pool */
  inThreadBytes: ByteSize.optional(),
  /** where spill files go (default: the OS temp folder); created when missing */
  spillDir: z.string().min(1).optional(),
});

/** `params`: named values a run supplies (--param NAME=VALUE, the library's `params`), else `default`. */
export const ParamsSchema = z.record(
  name,
  z.strictObject({
    type: TypeName,
    default: z.union([z.number(), z.string(), z.boolean()]).optional(),
    description: z.string().optional(),
  }),
);

/** A named input: Parquet files, or CSV files with their header, delimiter and (optionally) column types. */
const SourceSchema = z.union([
  z.strictObject({ parquet: z.union([name, z.array(name).min(1)]) }),
  z.strictObject({
    csv: z.union([name, z.array(name).min(1)]),
    header: z.boolean().optional(),
    delimiter: z.string().optional(),
    columns: z.record(name, TypeName).optional(),
  }),
]);
export type SourceSpec = z.infer<typeof SourceSchema>;

export const PlanSchema = z.strictObject({
  $schema: z.string().optional(),
  /** shown by --explain */
  description: z.string().optional(),
  version: z.literal(1),
  sources: z.record(name, SourceSchema),
  params: ParamsSchema.optional(),
  query: QueryNodeSchema,
  output: z.strictObject({ path: name, format: z.enum(OUTPUT_FORMATS).optional() }).optional(),
  execution: ExecutionSchema.optional(),
});

export type Plan = z.infer<typeof PlanSchema>;
export type ExecutionOptions = z.infer<typeof ExecutionSchema>;
export type SkewOptions = z.infer<typeof SkewOptionsSchema>;

export function planJsonSchema(): object {
  const s = z.toJSONSchema(PlanSchema, { target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...s, title: 'skewjoin plan.json, version 1', $id: 'https://skewjoin.dev/plan.schema.json' };
}

// a validated size as bytes (plan/bytes.ts: no zod, for the start-up's guess too)
