// The fuzzer's tables: small Parquet files written by DuckDB from SQL, with
// skewed keys, nulls, strings, 64-bit integers above 2^53 and DECIMAL columns
// (a narrow and a 16-byte one, negatives included), in small row groups
// (several map tasks per file). A column kind says which operations apply.
import path from 'node:path';
import { writeParquet } from '../helpers.js';

/** What the plan generator may do with a column. */
export type Kind = 'int' | 'big' | 'str' | 'float' | 'dec';

export interface ColumnSpec {
  name: string;
  kind: Kind;
  /** kept out of '*' (a 16-byte decimal: products would pass 38 digits) */
  wide?: boolean;
  /** DuckDB SQL for row i (`h(n)`: a hash of the row, the table's seed and n) */
  sql: (h: (n: number) => string) => string;
}

/** 2^53: values above it are exact only as 64-bit integers. */
export const BIG = 9007199254740992n;

export const COLUMNS: ColumnSpec[] = [
  // a skewed key: key 7 on 40% of rows, 10% null, the rest over 0..29
  { name: 'k', kind: 'int', sql: (h) => `CASE WHEN ${h(1)} % 10 < 4 THEN 7 WHEN ${h(1)} % 10 = 4 THEN NULL ELSE ${h(2)} % 30 END::BIGINT` },
  { name: 'k2', kind: 'int', sql: (h) => `(${h(3)} % 4)::BIGINT` },
  { name: 's', kind: 'str', sql: (h) => `CASE WHEN ${h(4)} % 3 = 0 THEN 'hot' WHEN ${h(4)} % 11 = 1 THEN NULL ELSE 'v' || (${h(5)} % 12) END` },
  { name: 'big', kind: 'big', sql: (h) => `CASE WHEN ${h(6)} % 9 = 0 THEN NULL ELSE (${BIG}::BIGINT + (${h(7)} % 6)::BIGINT) END` },
  { name: 'v', kind: 'int', sql: (h) => `((${h(8)} % 201)::BIGINT - 100)` },
  // decimals are cast in SQL so that DuckDB writes Parquet DECIMAL (int32 for p = 9, 16 bytes for p = 30);
  // d has 401 values (it joins and groups, without huge joins)
  { name: 'd', kind: 'dec', sql: (h) => `CASE WHEN ${h(11)} % 7 = 0 THEN NULL ELSE (((${h(12)} % 401)::BIGINT - 200)::DECIMAL(18,0) * 0.05)::DECIMAL(9,2) END` },
  { name: 'w', kind: 'dec', wide: true, sql: (h) => `CASE WHEN ${h(13)} % 6 = 0 THEN NULL ELSE (((${h(14)} % 2001)::BIGINT - 1000)::DECIMAL(18,0) * 0.0125 + CASE WHEN ${h(15)} % 5 = 0 THEN 123456789012345678.5 ELSE 0 END)::DECIMAL(30,4) END` },
  { name: 'f', kind: 'float', sql: (h) => `CASE WHEN ${h(9)} % 8 = 0 THEN NULL ELSE (${h(10)} % 40)::DOUBLE / 2 END` },
];

export interface Table { name: string; file: string; rows: number; columns: { name: string; kind: Kind; wide?: boolean }[] }

/** Write the tables (row counts and row group sizes given) into `dir`. */
export async function writeTables(dir: string, seed: number, shapes: { rows: number; rowGroup: number }[]): Promise<Table[]> {
  return Promise.all(shapes.map(async ({ rows, rowGroup }, t) => {
    const h = (n: number) => `hash(i, ${seed}, ${t}, ${n})`;
    const name = `t${t}`;
    const file = path.join(dir, `${name}.parquet`);
    const cols = COLUMNS.map((c) => `${c.sql(h)} AS "${c.name}"`).join(', ');
    await writeParquet(file, `SELECT ${cols} FROM range(0, ${rows}) r(i)`, rowGroup);
    return { name, file, rows, columns: COLUMNS.map((c) => ({ name: c.name, kind: c.kind, ...(c.wide ? { wide: true } : {}) })) };
  }));
}
