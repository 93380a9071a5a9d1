// The 22 official TPC-H texts (test/tpch/qNN.sql, qgen's ${NAME} placeholders) and the specification's
// validation parameters, shared by the plan tests (tpch.test.ts) and the SQL tests (sql-tpch.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.js';

export type Params = Record<string, string | number>;
/** The official SQL with the parameters written in. */
export function officialSql(q: string, params: Params = VALIDATION[q]): string {
  const text = fs.readFileSync(path.join(ROOT, 'test', 'tpch', `${q}.sql`), 'utf8');
  return text.replace(/\$\{(\w+)\}/g, (_, n) => {
    if (!(n in params)) throw new Error(`${q}.sql: no value for ${n}`);
    return String(params[n]);
  });
}
// The validation parameters of the specification (the reference answer set's), by query.
export const VALIDATION: Record<string, Params> = {
  q01: { DELTA: 90 },
  q02: { SIZE: 15, TYPE: 'BRASS', REGION: 'EUROPE' },
  q03: { SEGMENT: 'BUILDING', DATE: '1995-03-15' },
  q04: { DATE: '1993-07-01' },
  q05: { REGION: 'ASIA', DATE: '1994-01-01' },
  q06: { DATE: '1994-01-01', DISCOUNT: 0.06, QUANTITY: 24 },
  q07: { NATION1: 'FRANCE', NATION2: 'GERMANY' },
  q08: { NATION: 'BRAZIL', REGION: 'AMERICA', TYPE: 'ECONOMY ANODIZED STEEL' },
  q09: { COLOR: 'green' },
  q10: { DATE: '1993-10-01' },
  q11: { NATION: 'GERMANY', FRACTION: 0.0001 },
  q12: { SHIPMODE1: 'MAIL', SHIPMODE2: 'SHIP', DATE: '1994-01-01' },
  q13: { WORD1: 'special', WORD2: 'requests' },
  q14: { DATE: '1995-09-01' },
  q15: { DATE: '1996-01-01' },
  q16: {
    BRAND: 'Brand#45',
    TYPE: 'MEDIUM POLISHED',
    SIZE1: 49,
    SIZE2: 14,
    SIZE3: 23,
    SIZE4: 45,
    SIZE5: 19,
    SIZE6: 3,
    SIZE7: 36,
    SIZE8: 9,
  },
  q17: { BRAND: 'Brand#23', CONTAINER: 'MED BOX' },
  q18: { QUANTITY: 300 },
  q19: { QUANTITY1: 1, QUANTITY2: 10, QUANTITY3: 20, BRAND1: 'Brand#12', BRAND2: 'Brand#23', BRAND3: 'Brand#34' },
  q20: { COLOR: 'forest', DATE: '1994-01-01', NATION: 'CANADA' },
  q21: { NATION: 'SAUDI ARABIA' },
  q22: { I1: '13', I2: '31', I3: '23', I4: '29', I5: '30', I6: '18', I7: '17' },
};
