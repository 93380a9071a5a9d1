// The fuzzer's tables: small Parquet files written by DuckDB from SQL, with
// skewed keys, nulls, strings, 64-bit integers above 2^53, every integer width
// signed and unsigned (uint64 above 2^63), float32, decimals of three scales
// (a 16-byte one), dates, timestamps of each unit Parquet has (ms, us, ns) and
// booleans, in small row groups (several map tasks per file). A column kind
// says which operations apply; its DuckDB type says how SQL must treat it.
import path from 'node:path';
import { writeParquet } from '../helpers.js';

/** What the plan generator may do with a column. */
export type Kind = 'int' | 'big' | 'str' | 'float' | 'dec' | 'date' | 'ts' | 'bool';

interface ColumnSpec {
  name: string;
  kind: Kind;
  /** kept out of '*' (a 16-byte decimal: products would pass 38 digits) */
  wide?: boolean;
  /** its DuckDB type, when not BIGINT, VARCHAR, DOUBLE or the kind's own (narrow integers, timestamp units) */
  type?: string;
  /** DuckDB SQL for row i (`h(n)`: a hash of the row, the table's seed and n) */
  sql: (h: (n: number) => string) => string;
}

/** 2^53: values above it are exact only as 64-bit integers. */
export const BIG = 9007199254740992n;

const COLUMNS: ColumnSpec[] = [
  // a skewed key: key 7 on 40% of rows, 10% null, the rest over 0..29
  {
    name: 'k',
    kind: 'int',
    sql: (h) => `CASE WHEN ${h(1)} % 10 < 4 THEN 7 WHEN ${h(1)} % 10 = 4 THEN NULL ELSE ${h(2)} % 30 END::BIGINT`,
  },
  { name: 'k2', kind: 'int', sql: (h) => `(${h(3)} % 4)::BIGINT` },
  {
    name: 's',
    kind: 'str',
    sql: (h) => `CASE WHEN ${h(4)} % 3 = 0 THEN 'hot' WHEN ${h(4)} % 11 = 1 THEN NULL ELSE 'v' || (${h(5)} % 12) END`,
  },
  {
    name: 'big',
    kind: 'big',
    sql: (h) => `CASE WHEN ${h(6)} % 9 = 0 THEN NULL ELSE (${BIG}::BIGINT + (${h(7)} % 6)::BIGINT) END`,
  },
  { name: 'v', kind: 'int', sql: (h) => `((${h(8)} % 201)::BIGINT - 100)` },
  // decimals are cast in SQL so that DuckDB writes Parquet DECIMAL (int32 for p = 9, 16 bytes for p = 30);
  // d has 401 values (it joins and groups, without huge joins)
  {
    name: 'd',
    kind: 'dec',
    sql: (h) =>
      `CASE WHEN ${h(11)} % 7 = 0 THEN NULL ELSE (((${h(12)} % 401)::BIGINT - 200)::DECIMAL(18,0) * 0.05)::DECIMAL(9,2) END`,
  },
  {
    name: 'w',
    kind: 'dec',
    wide: true,
    sql: (h) =>
      `CASE WHEN ${h(13)} % 6 = 0 THEN NULL ELSE (((${h(14)} % 2001)::BIGINT - 1000)::DECIMAL(18,0) * 0.0125 + CASE WHEN ${h(15)} % 5 = 0 THEN 123456789012345678.5 ELSE 0 END)::DECIMAL(30,4) END`,
  },
  { name: 'f', kind: 'float', sql: (h) => `CASE WHEN ${h(9)} % 8 = 0 THEN NULL ELSE (${h(10)} % 40)::DOUBLE / 2 END` },
  // integers of every width: keys over the same values as k (joined across types), or small signed values
  {
    name: 'i8',
    kind: 'int',
    type: 'TINYINT',
    sql: (h) => `CASE WHEN ${h(16)} % 9 = 0 THEN NULL ELSE (${h(17)} % 61)::INTEGER - 30 END::TINYINT`,
  },
  {
    name: 'u8',
    kind: 'int',
    type: 'UTINYINT',
    sql: (h) => `CASE WHEN ${h(18)} % 3 = 0 THEN 7 ELSE ${h(19)} % 30 END::UTINYINT`,
  },
  { name: 'i16', kind: 'int', type: 'SMALLINT', sql: (h) => `((${h(20)} % 30)::INTEGER - 5)::SMALLINT` },
  {
    name: 'u16',
    kind: 'int',
    type: 'USMALLINT',
    sql: (h) => `CASE WHEN ${h(21)} % 8 = 0 THEN NULL ELSE ${h(22)} % 40 END::USMALLINT`,
  },
  {
    name: 'i32',
    kind: 'int',
    type: 'INTEGER',
    sql: (h) => `CASE WHEN ${h(23)} % 2 = 0 THEN 7 ELSE ${h(24)} % 30 END::INTEGER`,
  },
  { name: 'u32', kind: 'int', type: 'UINTEGER', sql: (h) => `(${h(25)} % 30)::UINTEGER` },
  // uint64: small keys and values above 2^63 (their bits are those of negative int64 values: a join must compare values)
  {
    name: 'u64',
    kind: 'big',
    type: 'UBIGINT',
    sql: (h) =>
      `CASE WHEN ${h(26)} % 7 = 0 THEN NULL WHEN ${h(26)} % 7 = 1 THEN 18446744073709551615 - ${h(27)} % 100 ELSE ${h(27)} % 30 END::UBIGINT`,
  },
  {
    name: 'f32',
    kind: 'float',
    type: 'FLOAT',
    sql: (h) => `CASE WHEN ${h(28)} % 10 = 0 THEN NULL ELSE (${h(29)} % 40)::FLOAT / 4 END`,
  },
  // a third decimal scale: joins d (scale 2) on the values both hold
  {
    name: 'd4',
    kind: 'dec',
    wide: true,
    type: 'DECIMAL(18,4)',
    sql: (h) =>
      `CASE WHEN ${h(30)} % 9 = 0 THEN NULL ELSE (((${h(31)} % 401)::BIGINT - 200)::DECIMAL(18,0) * 0.0125)::DECIMAL(18,4) END`,
  },
  {
    name: 'dt',
    kind: 'date',
    type: 'DATE',
    sql: (h) => `CASE WHEN ${h(32)} % 11 = 0 THEN NULL ELSE DATE '1995-01-01' + (${h(33)} % 60)::INTEGER END`,
  },
  // timestamps on whole hours, in each unit: they join each other across units
  {
    name: 'ts',
    kind: 'ts',
    type: 'TIMESTAMP',
    sql: (h) =>
      `CASE WHEN ${h(34)} % 10 = 0 THEN NULL ELSE TIMESTAMP '1995-01-01' + to_hours((${h(35)} % 48)::BIGINT) END`,
  },
  {
    name: 'tms',
    kind: 'ts',
    type: 'TIMESTAMP_MS',
    sql: (h) => `(TIMESTAMP '1995-01-01' + to_hours((${h(36)} % 48)::BIGINT))::TIMESTAMP_MS`,
  },
  {
    name: 'tns',
    kind: 'ts',
    type: 'TIMESTAMP_NS',
    sql: (h) =>
      `CASE WHEN ${h(37)} % 6 = 0 THEN NULL ELSE (TIMESTAMP '1995-01-01' + to_hours((${h(38)} % 48)::BIGINT))::TIMESTAMP_NS END`,
  },
  {
    name: 'b',
    kind: 'bool',
    type: 'BOOLEAN',
    sql: (h) => `CASE WHEN ${h(39)} % 7 = 0 THEN NULL ELSE ${h(40)} % 3 = 0 END`,
  },
];

/** DuckDB reads a Parquet TIMESTAMP(MILLIS) as TIMESTAMP; the engine keeps the unit. What a scan of the column is in SQL. */
export const scanSql = (c: { name: string; type?: string }) =>
  c.type === 'TIMESTAMP_MS' ? `"${c.name}"::TIMESTAMP_MS AS "${c.name}"` : `"${c.name}"`;

export interface Table {
  name: string;
  file: string;
  rows: number;
  columns: { name: string; kind: Kind; wide?: boolean; type?: string }[];
}

/** Write the tables (row counts and row group sizes given) into `dir`. */
export async function writeTables(
  dir: string,
  seed: number,
  shapes: { rows: number; rowGroup: number }[],
): Promise<Table[]> {
  return Promise.all(
    shapes.map(async ({ rows, rowGroup }, t) => {
      const h = (n: number) => `hash(i, ${seed}, ${t}, ${n})`;
      const name = `t${t}`;
      const file = path.join(dir, `${name}.parquet`);
      const cols = COLUMNS.map((c) => `${c.sql(h)} AS "${c.name}"`).join(', ');
      await writeParquet(file, `SELECT ${cols} FROM range(0, ${rows}) r(i)`, rowGroup);
      return {
        name,
        file,
        rows,
        columns: COLUMNS.map((c) => ({
          name: c.name,
          kind: c.kind,
          ...(c.wide ? { wide: true } : {}),
          ...(c.type ? { type: c.type } : {}),
        })),
      };
    }),
  );
}
