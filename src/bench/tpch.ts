// `skewjoin gen --tpch`: the eight TPC-H tables at a scale factor, with the
// specification's types (DECIMAL(15,2) money, DATE dates, int32 keys), key
// relationships, cardinalities and filtered value domains (clause 4.2.3). The
// text is not dbgen's. Columns are typed arrays written straight to Arrow and
// streamed to Parquet a chunk at a time, so SF 1 (6M line items) fits in memory
// (the columns and the writer are in tpch-columns.ts). With `skew` (gen --tpch --skew, after JCC-H's dbgen -k) a
// few hot customers, parts (with their suppliers) and order dates hold a large share of the rows (HOT_SHARES); the
// uniform tables draw the same numbers either way, the skew only overrides some of them from a generator of its own.
import fs from 'node:fs';
import path from 'node:path';
import { type Cols, date, int32, money, Pool, utf8, writeParquet } from './tpch-columns.js';
import { rng } from './zipf.js';
import {
  COLORS,
  CONTAINER_KIND,
  CONTAINER_SIZE,
  INSTRUCTIONS,
  NATIONS,
  PRIORITIES,
  REGIONS,
  SEGMENTS,
  SHIP_MODES,
  TYPE_FINISH,
  TYPE_METAL,
  TYPE_SIZE,
  comment,
} from './tpch-domains.js';

import type { TpchOptions } from './defaults.js';
export { TPCH_DEFAULTS, type TpchOptions } from './defaults.js';

export const TPCH_TABLES = [
  'region',
  'nation',
  'supplier',
  'customer',
  'part',
  'partsupp',
  'orders',
  'lineitem',
] as const;

const DAY = 86_400_000;
const dayOf = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / DAY;
const START = dayOf('1992-01-01');
const LAST_ORDER = dayOf('1998-12-31') - 151;
/** CURRENTDATE of the specification: decides return flags and line status. */
const CURRENT = dayOf('1995-06-17');

/**
 * Rows generated at a time, whatever the row group size (the writer gathers
 * chunks into row groups): the data do not depend on it, and the module's
 * memory holds one small chunk at a time (it grows to its peak and never shrinks).
 */
const GEN_CHUNK = 100_000;

/** Row ranges [lo, hi) of at most `size` rows. */
function* ranges(n: number, size: number): Generator<[number, number]> {
  for (let lo = 0; lo < n; lo += size) yield [lo, Math.min(n, lo + size)];
}

// ---- the tables ---------------------------------------------------------------------------

const pad9 = (k: number) => String(k).padStart(9, '0');

class Gen {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = rng(seed);
  }
  /** uniform integer in [lo, hi] */
  int(lo: number, hi: number) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  comments(n: number, maxPhrases: number) {
    return new Pool(Array.from({ length: n }, () => comment(this.next, this.int(1, maxPhrases))));
  }
  text(n: number) {
    const abc = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,';
    return new Pool(
      Array.from({ length: n }, () =>
        Array.from({ length: this.int(10, 40) }, () => abc[this.int(0, abc.length - 1)]).join(''),
      ),
    );
  }
  phone(nation: number) {
    return `${nation + 10}-${this.int(100, 999)}-${this.int(100, 999)}-${this.int(1000, 9999)}`;
  }
  indices(n: number, size: number) {
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.next() * size);
    return out;
  }
}

/** Table sizes at a scale factor (clause 4.2.5), at least one row each. */
export function tpchCounts(sf: number) {
  const c = (base: number) => Math.max(1, Math.round(base * sf));
  return { supplier: c(10_000), part: c(200_000), customer: c(150_000), orders: c(1_500_000), clerks: c(1_000) };
}

const retailCents = (pk: number) => 90000 + (Math.floor(pk / 10) % 20001) + 100 * (pk % 1000);
/** The i-th (0..3) supplier of a part (clause 4.2.3): every part has four, and line items use one of them. */
const supplierOf = (pk: number, i: number, S: number) =>
  ((pk + i * (Math.floor(S / 4) + Math.floor((pk - 1) / S))) % S) + 1;
/**
 * A few orders of seven large lines, so that Q18 (orders over 300 units) has
 * rows at small scales too; uniform quantities give them at about 1 in 10,000.
 */
const isLarge = (i: number) => i % 5003 === 17;
/** Order keys are sparse: 8 used of every 32. */
const orderKey = (k: number) => ((k >> 3) << 5) | (k & 7);

/**
 * The skew of `gen --tpch --skew`: the five hottest customers' shares of the orders, the five hottest parts' shares
 * of the line items (each hot part's line items all from its first supplier, so five hot suppliers hold the same
 * shares, JCC-H's join-crossing correlation), and the five hottest order dates' shares of the orders: 20% of each in
 * five keys, the hottest 5% (JCC-H SF 1: one customer with ~73,000 of 1.5M orders, one supplier with ~209,000 of
 * 6M line items). The other rows stay uniform.
 */
export const HOT_SHARES = [0.05, 0.045, 0.04, 0.035, 0.03];

/** Picks a hot key's index by HOT_SHARES, or -1 for a uniform row (1 - their sum), from its own generator. */
function hotPicker(seed: number): () => number {
  const next = rng(seed);
  return () => {
    let u = next();
    for (let k = 0; k < HOT_SHARES.length; k++) {
      if (u < HOT_SHARES[k]) return k;
      u -= HOT_SHARES[k];
    }
    return -1;
  };
}

/** The hot keys of `gen --tpch --skew`: spread over the key ranges, customers who order, parts of distinct suppliers. */
export function hotKeys(c: ReturnType<typeof tpchCounts>): { customers: number[]; parts: number[]; dates: number[] } {
  const k = HOT_SHARES.length;
  const spread = (n: number, i: number) => Math.max(1, Math.min(n, Math.floor(((i + 0.5) * n) / k) + i));
  const customers = Array.from({ length: k }, (_, i) => {
    const x = spread(c.customer, i);
    return x % 3 === 0 ? (x > 1 ? x - 1 : x + 1) : x; // a customer c % 3 == 0 never orders
  });
  const parts = Array.from({ length: k }, (_, i) => spread(c.part, i));
  const days = LAST_ORDER - START + 1;
  const dates = Array.from({ length: k }, (_, i) => START + Math.floor(((i + 0.5) * days) / k));
  return { customers, parts, dates };
}

function fixedTables(g: Gen): { region: Cols; nation: Cols } {
  return {
    region: [
      ['r_regionkey', int32(Int32Array.from(REGIONS, (_, i) => i))],
      ['r_name', utf8(REGIONS)],
      ['r_comment', g.comments(REGIONS.length, 3).column(Int32Array.from(REGIONS, (_, i) => i))],
    ],
    nation: [
      ['n_nationkey', int32(Int32Array.from(NATIONS, (_, i) => i))],
      ['n_name', utf8(NATIONS.map((x) => x[0]))],
      ['n_regionkey', int32(Int32Array.from(NATIONS, (x) => x[1]))],
      ['n_comment', g.comments(NATIONS.length, 3).column(Int32Array.from(NATIONS, (_, i) => i))],
    ],
  };
}

function supplier(g: Gen, n: number, sf: number): Cols {
  const nation = Int32Array.from({ length: n }, () => g.int(0, 24));
  const words = g.comments(256, 2);
  const com = Array.from({ length: n }, () => words.strings[g.int(0, words.size - 1)]);
  // Q16 leaves out suppliers with complaints: 5 per SF of each kind (at least one), as dbgen plants them
  const planted = Math.max(1, Math.round(5 * sf));
  for (let k = 0; k < 2 * planted && k < n; k++) {
    const i = g.int(0, n - 1);
    const before = words.strings[g.int(0, words.size - 1)];
    const after = words.strings[g.int(0, words.size - 1)];
    com[i] = `${before} Customer ${k < planted ? 'Complaints' : 'Recommends'} ${after}`;
  }
  const keys = Int32Array.from({ length: n }, (_, i) => i + 1);
  return [
    ['s_suppkey', int32(keys)],
    ['s_name', utf8(Array.from(keys, (k) => `Supplier#${pad9(k)}`))],
    ['s_address', g.text(1024).column(g.indices(n, 1024))],
    ['s_nationkey', int32(nation)],
    ['s_phone', utf8(Array.from(nation, (x) => g.phone(x)))],
    ['s_acctbal', money(Int32Array.from({ length: n }, () => g.int(-99999, 999999)))],
    ['s_comment', utf8(com)],
  ];
}

function customer(g: Gen, n: number): Cols {
  const nation = Int32Array.from({ length: n }, () => g.int(0, 24));
  const keys = Int32Array.from({ length: n }, (_, i) => i + 1);
  return [
    ['c_custkey', int32(keys)],
    ['c_name', utf8(Array.from(keys, (k) => `Customer#${pad9(k)}`))],
    ['c_address', g.text(4096).column(g.indices(n, 4096))],
    ['c_nationkey', int32(nation)],
    ['c_phone', utf8(Array.from(nation, (x) => g.phone(x)))],
    ['c_acctbal', money(Int32Array.from({ length: n }, () => g.int(-99999, 999999)))],
    ['c_mktsegment', new Pool(SEGMENTS).column(g.indices(n, SEGMENTS.length))],
    ['c_comment', g.comments(4096, 3).column(g.indices(n, 4096))],
  ];
}

function* part(g: Gen, n: number, size: number): Generator<Cols> {
  const types = new Pool(TYPE_SIZE.flatMap((a) => TYPE_FINISH.flatMap((b) => TYPE_METAL.map((c) => `${a} ${b} ${c}`))));
  const containers = new Pool(CONTAINER_SIZE.flatMap((a) => CONTAINER_KIND.map((b) => `${a} ${b}`)));
  const comments = g.comments(2048, 2);
  for (const [lo, hi] of ranges(n, size)) {
    const m = hi - lo,
      keys = Int32Array.from({ length: m }, (_, i) => lo + i + 1);
    const names = Array.from({ length: m }, () => {
      const picked: string[] = [];
      while (picked.length < 5) {
        const c = COLORS[g.int(0, COLORS.length - 1)];
        if (!picked.includes(c)) picked.push(c);
      }
      return picked.join(' ');
    });
    const mfgr = Int32Array.from({ length: m }, () => g.int(1, 5));
    yield [
      ['p_partkey', int32(keys)],
      ['p_name', utf8(names)],
      ['p_mfgr', utf8(Array.from(mfgr, (x) => `Manufacturer#${x}`))],
      ['p_brand', utf8(Array.from(mfgr, (x) => `Brand#${x}${g.int(1, 5)}`))],
      ['p_type', types.column(g.indices(m, types.size))],
      ['p_size', int32(Int32Array.from({ length: m }, () => g.int(1, 50)))],
      ['p_container', containers.column(g.indices(m, containers.size))],
      ['p_retailprice', money(keys.map(retailCents))],
      ['p_comment', comments.column(g.indices(m, comments.size))],
    ];
  }
}

function* partsupp(g: Gen, parts: number, suppliers: number, size: number): Generator<Cols> {
  const comments = g.comments(4096, 3);
  for (const [lo, hi] of ranges(parts, Math.max(1, size >> 2))) {
    const m = (hi - lo) * 4;
    const pk = new Int32Array(m),
      sk = new Int32Array(m);
    for (let p = lo; p < hi; p++)
      for (let i = 0; i < 4; i++) {
        pk[(p - lo) * 4 + i] = p + 1;
        sk[(p - lo) * 4 + i] = supplierOf(p + 1, i, suppliers);
      }
    yield [
      ['ps_partkey', int32(pk)],
      ['ps_suppkey', int32(sk)],
      ['ps_availqty', int32(Int32Array.from({ length: m }, () => g.int(1, 9999)))],
      ['ps_supplycost', money(Int32Array.from({ length: m }, () => g.int(100, 100000)))],
      ['ps_comment', comments.column(g.indices(m, comments.size))],
    ];
  }
}

/** Order attributes drawn before the line items; price and status are filled in from them. */
interface Orders {
  custkey: Int32Array;
  date: Int32Array;
  lines: Uint8Array;
  total: Float64Array;
  status: Int32Array;
}

function drawOrders(g: Gen, n: number, customers: number, hot: Hot | null): Orders {
  const o: Orders = {
    custkey: new Int32Array(n),
    date: new Int32Array(n),
    lines: new Uint8Array(n),
    total: new Float64Array(n),
    status: new Int32Array(n),
  };
  for (let i = 0; i < n; i++) {
    let c = g.int(1, customers);
    if (c % 3 === 0) c = c > 1 ? c - 1 : c + 1; // a third of the customers never order (Q13, Q22)
    o.custkey[i] = c;
    o.date[i] = g.int(START, LAST_ORDER);
    o.lines[i] = isLarge(i) ? 7 : g.int(1, 7);
    if (hot) {
      const hc = hot.customer(),
        hd = hot.date();
      if (hc >= 0) o.custkey[i] = hot.keys.customers[hc];
      if (hd >= 0) o.date[i] = hot.keys.dates[hd];
    }
  }
  return o;
}

const FLAG = new Pool(['R', 'A', 'N']);
const STATUS = new Pool(['F', 'O', 'P']);

/** The skew's keys and pickers (gen --tpch --skew), each picker a generator of its own. */
interface Hot {
  keys: ReturnType<typeof hotKeys>;
  customer: () => number;
  date: () => number;
  part: () => number;
}

function* lineitem(
  g: Gen,
  o: Orders,
  c: ReturnType<typeof tpchCounts>,
  size: number,
  hot: Hot | null,
): Generator<Cols> {
  const comments = g.comments(8192, 2);
  const n = o.lines.length;
  let first = 0;
  while (first < n) {
    let last = first,
      m = 0;
    while (last < n && m + o.lines[last] <= size) m += o.lines[last++];
    if (last === first) m = o.lines[last++];
    const ok = new Int32Array(m),
      pk = new Int32Array(m),
      sk = new Int32Array(m),
      ln = new Int32Array(m);
    const qty = new Int32Array(m),
      price = new Int32Array(m),
      disc = new Int32Array(m),
      tax = new Int32Array(m);
    const ship = new Int32Array(m),
      commit = new Int32Array(m),
      receipt = new Int32Array(m);
    const flag = new Int32Array(m),
      status = new Int32Array(m);
    let r = 0;
    for (let i = first; i < last; i++) {
      let hasF = 0,
        hasO = 0,
        total = 0;
      for (let l = 1; l <= o.lines[i]; l++, r++) {
        ok[r] = orderKey(i + 1);
        ln[r] = l;
        let p = g.int(1, c.part),
          si = g.int(0, 3);
        const hp = hot ? hot.part() : -1;
        if (hp >= 0) {
          p = hot!.keys.parts[hp];
          si = 0;
        }
        pk[r] = p;
        sk[r] = supplierOf(p, si, c.supplier);
        qty[r] = isLarge(i) ? g.int(44, 50) : g.int(1, 50);
        price[r] = qty[r] * retailCents(p);
        disc[r] = g.int(0, 10);
        tax[r] = g.int(0, 8);
        ship[r] = o.date[i] + g.int(1, 121);
        commit[r] = o.date[i] + g.int(30, 90);
        receipt[r] = ship[r] + g.int(1, 30);
        flag[r] = receipt[r] <= CURRENT ? g.int(0, 1) : 2;
        status[r] = ship[r] > CURRENT ? 1 : 0;
        if (status[r]) hasO = 1;
        else hasF = 1;
        total += price[r] * (100 + tax[r]) * (100 - disc[r]); // cents x 10^4, exact in a double
      }
      o.total[i] = Math.round(total / 10000);
      o.status[i] = hasF && hasO ? 2 : hasO ? 1 : 0;
    }
    yield [
      ['l_orderkey', int32(ok)],
      ['l_partkey', int32(pk)],
      ['l_suppkey', int32(sk)],
      ['l_linenumber', int32(ln)],
      ['l_quantity', money(qty.map((q) => q * 100))],
      ['l_extendedprice', money(price)],
      ['l_discount', money(disc)],
      ['l_tax', money(tax)],
      ['l_returnflag', FLAG.column(flag)],
      ['l_linestatus', STATUS.column(status)],
      ['l_shipdate', date(ship)],
      ['l_commitdate', date(commit)],
      ['l_receiptdate', date(receipt)],
      ['l_shipinstruct', new Pool(INSTRUCTIONS).column(g.indices(m, INSTRUCTIONS.length))],
      ['l_shipmode', new Pool(SHIP_MODES).column(g.indices(m, SHIP_MODES.length))],
      ['l_comment', comments.column(g.indices(m, comments.size))],
    ];
    first = last;
  }
}

function* orders(g: Gen, o: Orders, clerks: number, size: number): Generator<Cols> {
  const comments = g.comments(8192, 3);
  const clerk = new Pool(Array.from({ length: clerks }, (_, i) => `Clerk#${pad9(i + 1)}`));
  for (const [lo, hi] of ranges(o.lines.length, size)) {
    const m = hi - lo;
    yield [
      ['o_orderkey', int32(Int32Array.from({ length: m }, (_, i) => orderKey(lo + i + 1)))],
      ['o_custkey', int32(o.custkey.slice(lo, hi))],
      ['o_orderstatus', STATUS.column(o.status.subarray(lo, hi))],
      ['o_totalprice', money(Int32Array.from(o.total.subarray(lo, hi)))],
      ['o_orderdate', date(o.date.slice(lo, hi))],
      ['o_orderpriority', new Pool(PRIORITIES).column(g.indices(m, PRIORITIES.length))],
      ['o_clerk', clerk.column(g.indices(m, clerks))],
      ['o_shippriority', int32(new Int32Array(m))],
      ['o_comment', comments.column(g.indices(m, comments.size))],
    ];
  }
}

/** Write the eight tables to `out/<table>.parquet`; returns the files written. */
export async function generateTpch(opt: TpchOptions): Promise<string[]> {
  fs.mkdirSync(opt.out, { recursive: true });
  const c = tpchCounts(opt.scale);
  const file = (t: string) => path.join(opt.out, `${t}.parquet`);
  const size = opt.rowGroupSize;
  const chunk = GEN_CHUNK;
  // one generator per table, so that a table does not change when another's code does
  const gen = (k: number) => new Gen(opt.seed * 1000 + k);
  const fixed = fixedTables(gen(0));
  await writeParquet(file('region'), [fixed.region], size);
  await writeParquet(file('nation'), [fixed.nation], size);
  await writeParquet(file('supplier'), [supplier(gen(1), c.supplier, opt.scale)], size);
  await writeParquet(file('customer'), [customer(gen(2), c.customer)], size);
  await writeParquet(file('part'), part(gen(3), c.part, chunk), size);
  await writeParquet(file('partsupp'), partsupp(gen(4), c.part, c.supplier, chunk), size);
  const seed = opt.seed * 1000;
  const hot: Hot | null = opt.skew
    ? { keys: hotKeys(c), customer: hotPicker(seed + 8), date: hotPicker(seed + 9), part: hotPicker(seed + 10) }
    : null;
  const o = drawOrders(gen(5), c.orders, c.customer, hot);
  await writeParquet(file('lineitem'), lineitem(gen(6), o, c, chunk, hot), size);
  await writeParquet(file('orders'), orders(gen(7), o, c.clerks, chunk), size);
  return TPCH_TABLES.map(file);
}
