// The columns an expression reads, and the same expression over renumbered
// columns (column pruning), and its text for --explain.
import { decimalText } from '../kernels/column.js';
import { formatDate } from '../io/output.js';
import { convertScalar } from './scalar.js';
import { UTF8 } from './types.js';
import type { BoundExpr } from './types.js';

export function exprCols(e: BoundExpr, into: Set<number>): Set<number> {
  switch (e.k) {
    case 'col':
      into.add(e.col);
      break;
    case 'lit':
      break;
    case 'cast':
      exprCols(e.arg, into);
      break;
    case 'fn':
      e.args.forEach((a) => exprCols(a, into));
      break;
    case 'case':
      [...e.whens, ...e.thens, ...(e.else ? [e.else] : [])].forEach((a) => exprCols(a, into));
  }
  return into;
}

export function remapExpr(e: BoundExpr, map: number[]): BoundExpr {
  switch (e.k) {
    case 'col':
      return { ...e, col: map[e.col] };
    case 'lit':
      return e;
    case 'cast':
      return { ...e, arg: remapExpr(e.arg, map) };
    case 'fn':
      return { ...e, args: e.args.map((a) => remapExpr(a, map)) };
    case 'case':
      return {
        ...e,
        whens: e.whens.map((a) => remapExpr(a, map)),
        thens: e.thens.map((a) => remapExpr(a, map)),
        else: e.else && remapExpr(e.else, map),
      };
  }
}

const INFIX = new Set(['+', '-', '*', '/', '%', '=', '!=', '<', '<=', '>', '>=', 'and', 'or']);

export function exprText(e: BoundExpr, names: string[]): string {
  switch (e.k) {
    case 'col':
      return names[e.col] ?? `#${e.col}`;
    case 'lit':
      if (typeof e.value === 'string') return JSON.stringify(e.value);
      if (e.type.id === 'date32' && e.value !== null) return `date '${formatDate(e.value as number)}'`;
      if (e.type.id === 'timestamp' && e.value !== null) return `timestamp '${convertScalar(e.value, e.type, UTF8)}'`;
      return e.type.id === 'decimal' && e.value !== null
        ? decimalText(e.value as bigint, e.type.scale!)
        : String(e.value);
    case 'cast':
      return (
        `cast(${exprText(e.arg, names)} as ` +
        `${e.type.id === 'decimal' ? `decimal(${e.type.precision},${e.type.scale})` : e.type.id})`
      );
    case 'case': {
      const whens = e.whens.map((w, i) => `when ${exprText(w, names)} then ${exprText(e.thens[i], names)}`);
      return `case ${whens.join(' ')}${e.else ? ` else ${exprText(e.else, names)}` : ''} end`;
    }
    case 'fn': {
      const args = e.args.map((a) => exprText(a, names));
      if (INFIX.has(e.fn)) return `(${args.join(` ${e.fn} `)})`;
      if (e.fn === '$like') return `(${args[0]} like ${args[1]})`;
      if (e.fn === '$in') return `(${args[0]} in (${args.slice(1).join(', ')}))`;
      return `${e.fn}(${args.join(', ')})`;
    }
  }
}
