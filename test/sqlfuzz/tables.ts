// The SQL fuzzer's tables: four small Parquet files written by DuckDB with the
// same columns (so any two join on any key), a hot key (7 on 40% of f's rows),
// nulls in every column but one, NaN among the floats, empty strings, decimals,
// dates and booleans, in small row groups (several map tasks per file). The
// same files are DuckDB's views of the same names: both engines read one text.
import path from 'node:path';
import { sql, writeParquet } from '../helpers.js';

/** What the generator may do with a column. */
export type Kind = 'int' | 'dec' | 'float' | 'str' | 'date' | 'bool';

export interface Column {
  name: string;
  kind: Kind;
}

/** Each table's columns: `h(n)` a hash of the row, the table and n; `key` how the table's keys are spread. */
const COLUMNS: (Column & { sql: (h: (n: number) => string, hot: boolean) => string })[] = [
  {
    name: 'k',
    kind: 'int',
    sql: (h, hot) =>
      hot
        ? `CASE WHEN ${h(1)} % 10 < 4 THEN 7 WHEN ${h(1)} % 10 = 4 THEN NULL ELSE ${h(2)} % 20 END::BIGINT`
        : `CASE WHEN ${h(1)} % 12 = 0 THEN NULL ELSE i % 24 END::BIGINT`,
  },
  { name: 'k2', kind: 'int', sql: (h) => `CASE WHEN ${h(3)} % 9 = 0 THEN NULL ELSE ${h(4)} % 4 END::BIGINT` },
  {
    name: 'n',
    kind: 'int',
    sql: (h) => `CASE WHEN ${h(5)} % 8 = 0 THEN NULL ELSE (${h(6)} % 41)::BIGINT - 20 END::BIGINT`,
  },
  { name: 'i', kind: 'int', sql: (h) => `(${h(7)} % 13)::INTEGER` },
  {
    name: 's',
    kind: 'str',
    sql: (h) =>
      `CASE WHEN ${h(8)} % 5 = 0 THEN 'hot' WHEN ${h(8)} % 7 = 1 THEN NULL WHEN ${h(8)} % 7 = 2 THEN '' ELSE 'v' || (${h(9)} % 8) END`,
  },
  {
    name: 'x',
    kind: 'float',
    sql: (h) =>
      `CASE WHEN ${h(10)} % 11 = 0 THEN 'NaN'::DOUBLE WHEN ${h(10)} % 11 = 1 THEN NULL ELSE (${h(11)} % 31)::DOUBLE / 2 - 5.0 END`,
  },
  {
    name: 'dc',
    kind: 'dec',
    sql: (h) =>
      `CASE WHEN ${h(12)} % 7 = 0 THEN NULL ELSE ((${h(13)} % 21)::BIGINT - 10)::DECIMAL(18,0) * 0.25 END::DECIMAL(9,2)`,
  },
  {
    name: 'dt',
    kind: 'date',
    sql: (h) => `CASE WHEN ${h(14)} % 10 = 0 THEN NULL ELSE DATE '1995-01-01' + (${h(15)} % 12)::INTEGER END`,
  },
  { name: 'b', kind: 'bool', sql: (h) => `CASE WHEN ${h(16)} % 6 = 0 THEN NULL ELSE ${h(17)} % 3 = 0 END` },
];

export const COLUMN_KINDS: Column[] = COLUMNS.map(({ name, kind }) => ({ name, kind }));

export interface Table {
  name: string;
  file: string;
  rows: number;
}

/** f: the fact table with the hot key; d: a dimension (each key about twice); g: a few rows; e: none. */
const SHAPES = [
  { name: 'f', rows: 240, rowGroup: 40, hot: true },
  { name: 'd', rows: 60, rowGroup: 16, hot: false },
  { name: 'g', rows: 20, rowGroup: 8, hot: true },
  { name: 'e', rows: 0, rowGroup: 16, hot: false },
];

/** Write the tables into `dir` and make each a DuckDB view of its file. */
export async function writeTables(dir: string, seed: number): Promise<Table[]> {
  const out: Table[] = [];
  for (const [t, s] of SHAPES.entries()) {
    const h = (n: number) => `hash(i, ${seed}, ${t}, ${n})`;
    const file = path.join(dir, `${s.name}.parquet`);
    const cols = COLUMNS.map((c) => `${c.sql(h, s.hot)} AS "${c.name}"`).join(', ');
    await writeParquet(file, `SELECT ${cols} FROM range(0, ${s.rows}) r(i)`, s.rowGroup);
    await sql(`CREATE OR REPLACE VIEW ${s.name} AS SELECT * FROM read_parquet('${file}')`);
    out.push({ name: s.name, file, rows: s.rows });
  }
  return out;
}
