// Sorting: a row order (indices) from a list of sort keys; strings compare
// by UTF-8 bytes (code point order), nulls last unless asked otherwise.
import type { Batch, Column } from './column.js';

export interface SortKey { col: number; desc: boolean; nullsFirst: boolean }

export function valueComparator(c: Column): (i: number, j: number) => number {
  const v = c.values as any;
  if (c.type.id === 'utf8') {
    const o = c.offsets!;
    return (i, j) => {
      const a0 = o[i], a1 = o[i + 1], b0 = o[j], b1 = o[j + 1];
      const n = Math.min(a1 - a0, b1 - b0);
      for (let k = 0; k < n; k++) {
        const d = v[a0 + k] - v[b0 + k];
        if (d !== 0) return d;
      }
      return (a1 - a0) - (b1 - b0);
    };
  }
  return (i, j) => (v[i] < v[j] ? -1 : v[i] > v[j] ? 1 : 0);
}

export function sortIndices(b: Batch, keys: SortKey[]): Int32Array {
  const cmps = keys.map((k) => {
    const c = b.columns[k.col];
    const cmp = valueComparator(c);
    const valid = c.valid;
    const dir = k.desc ? -1 : 1;
    const nullDir = k.nullsFirst ? -1 : 1;
    return (i: number, j: number) => {
      if (valid !== null) {
        const ni = valid[i] === 0, nj = valid[j] === 0;
        if (ni || nj) return ni === nj ? 0 : ni ? nullDir : -nullDir;
      }
      return dir * cmp(i, j);
    };
  });
  const idx = new Int32Array(b.length);
  for (let i = 0; i < idx.length; i++) idx[i] = i;
  // Ties keep input order: compare indices last (TypedArray sort is not guaranteed stable).
  return idx.sort((i, j) => {
    for (const c of cmps) {
      const d = c(i, j);
      if (d !== 0) return d;
    }
    return i - j;
  });
}
