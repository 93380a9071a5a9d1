// What the planning of one query shares: the catalog, unique column ids, the
// parameters met and their types, the CTEs in scope, and the sources read.
import type { QueryNode } from '../plan/spec.js';
import type { Catalog } from './catalog.js';
import type { Cte, Select } from './ast.js';
import type { Col, Namer, Scope } from './scope.js';

/** Where a query's tables are (compileSql, runSql, DESCRIBE). */
export interface SqlOptions {
  /** files of the tables the query names: a file, a glob, a folder or a list (`--source NAME=PATH`) */
  sources?: Record<string, string | string[]>;
  /** folder that relative paths resolve against (default: the current directory) */
  baseDir?: string;
  /** a folder binding every table the query names (and `sources` does not give): DIR/name.parquet, DIR/name/, DIR/name.csv */
  data?: string;
  /** the names come from the command line (messages say --source) */
  fromCommandLine?: boolean;
}

/** A planned relation: its plan node, its columns, and its estimated rows. */
export interface Rel {
  node: QueryNode;
  cols: Col[];
  rows: number;
  baseRows: number;
}

/** What a correlated subquery's conditions on the enclosing block came to. */
export interface Correlation {
  /** equalities: enclosing column id = this block's column id */
  pairs: { outer: string; inner: string }[];
  /** one other comparison `inner op outer` (EXISTS only; decorrelated with min/max) */
  residual: { inner: string; op: string; outer: import('./ast.js').Expr }[];
}

export interface Ctx {
  catalog: Catalog;
  namer: Namer;
  params: Map<string, string>;
  ctes: Map<string, Cte>;
  usedSources: Set<string>;
  planSelect(q: Select, parent: Scope | undefined, corr?: Correlation, top?: boolean): Rel;
  planWhere(q: Select, parent: Scope, corr: Correlation): Rel;
}
