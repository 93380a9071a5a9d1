// String equality and IN against literals, row by row with no comparator
// closure: a value's length first (most rows differ there), then its bytes.
// TPC-H q19's `l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER
// IN PERSON'` over every line item spent about a sixth of the query's CPU
// calling a closure per row and literal. Truth values as expr/filter.ts
// writes them: false 0, true 1, null 2.

const F = 0,
  T = 1,
  N = 2;

/** Whether the bytes v[s, s + lit.length) are lit's (the lengths are equal). */
function sameBytes(v: Uint8Array, s: number, lit: Uint8Array): boolean {
  for (let k = 0; k < lit.length; k++) if (v[s + k] !== lit[k]) return false;
  return true;
}

/** Each row = lit (or != lit when `negate`), null rows null. */
export function strEqRows(
  out: Uint8Array,
  o: Int32Array,
  v: Uint8Array,
  valid: Uint8Array | null,
  lit: Uint8Array,
  negate: boolean,
  n: number,
): void {
  const len = lit.length;
  for (let i = 0; i < n; i++) {
    if (valid !== null && valid[i] === 0) {
      out[i] = N;
      continue;
    }
    const s = o[i];
    out[i] = (o[i + 1] - s === len && sameBytes(v, s, lit)) !== negate ? T : F;
  }
}

/** Each row IN lits: true when one matches, else null when the list holds a null (`nullInList`), else false. */
export function strInRows(
  out: Uint8Array,
  o: Int32Array,
  v: Uint8Array,
  valid: Uint8Array | null,
  lits: Uint8Array[],
  nullInList: boolean,
  n: number,
): void {
  const none = nullInList ? N : F;
  for (let i = 0; i < n; i++) {
    if (valid !== null && valid[i] === 0) {
      out[i] = N;
      continue;
    }
    const s = o[i],
      len = o[i + 1] - s;
    let r = none;
    for (let k = 0; k < lits.length; k++) {
      const lit = lits[k];
      if (lit.length === len && sameBytes(v, s, lit)) {
        r = T;
        break;
      }
    }
    out[i] = r;
  }
}
