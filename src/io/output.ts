// Result text: cells as CSV, JSON lines and the terminal table (files are
// written batch by batch by io/result-file.ts).
import {
  type Batch,
  type Column,
  type Field,
  decimalAt,
  decimalText,
  isNull,
  rowCount,
  stringAt,
} from '../kernels/column.js';

const NS_PER_UNIT = { second: 1000000000n, millisecond: 1000000n, microsecond: 1000n, nanosecond: 1n } as const;

function pad(n: number, w = 2) {
  return String(n).padStart(w, '0');
}

export function formatDate(days: number): string {
  const d = new Date(days * 86400000);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

export function formatTimestamp(v: bigint, unit: keyof typeof NS_PER_UNIT, tz: string | null | undefined): string {
  const ns = v * NS_PER_UNIT[unit];
  let ms = ns / 1000000n;
  let sub = ns % 1000000n;
  if (sub < 0n) {
    sub += 1000000n;
    ms -= 1n;
  }
  const d = new Date(Number(ms));
  const frac = String(Number((ms % 1000n) + 1000n) % 1000).padStart(3, '0') + String(sub).padStart(6, '0');
  const digits = unit === 'second' ? 0 : unit === 'millisecond' ? 3 : unit === 'microsecond' ? 6 : 9;
  const f = digits ? '.' + frac.slice(0, digits) : '';
  const day = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const s = `${day}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${f}`;
  return tz ? s + 'Z' : s;
}

/** A cell as text (CSV, table) or null. */
export function cellText(c: Column, i: number): string | null {
  if (isNull(c, i)) return null;
  const v = c.values[i];
  switch (c.type.id) {
    case 'utf8':
      return stringAt(c, i);
    case 'bool':
      return v ? 'true' : 'false';
    case 'date32':
      return formatDate(v as number);
    case 'timestamp':
      return formatTimestamp(v as bigint, c.type.unit!, c.type.tz);
    case 'decimal':
      return decimalText(decimalAt(c, i), c.type.scale!);
    default:
      return String(v);
  }
}

/** A cell as a JSON value text: numbers exact (64-bit integers too), NaN and infinities as null. */
function cellJson(c: Column, i: number): string {
  if (isNull(c, i)) return 'null';
  const id = c.type.id;
  if (id === 'utf8' || id === 'date32' || id === 'timestamp' || id === 'decimal') return JSON.stringify(cellText(c, i));
  if (id === 'bool') return c.values[i] ? 'true' : 'false';
  const v = c.values[i];
  if (typeof v === 'number' && !Number.isFinite(v)) return 'null';
  return String(v);
}

function csvField(s: string | null): string {
  if (s === null) return '';
  return /[",\r\n]/.test(s) || s === '' ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvHeader(fields: Field[]): string {
  return fields.map((f) => csvField(f.name)).join(',') + '\n';
}

/** One batch as CSV lines (each ended by a newline). */
export function csvLines(b: Batch): string {
  const lines: string[] = [];
  for (let i = 0; i < b.length; i++) lines.push(b.columns.map((c) => csvField(cellText(c, i))).join(','));
  return lines.length ? lines.join('\n') + '\n' : '';
}

/** One batch as JSON lines (each ended by a newline). */
export function jsonlLines(fields: Field[], b: Batch): string {
  const keys = fields.map((f) => JSON.stringify(f.name) + ':');
  const lines: string[] = [];
  for (let i = 0; i < b.length; i++) {
    lines.push('{' + b.columns.map((c, k) => keys[k] + cellJson(c, i)).join(',') + '}');
  }
  return lines.length ? lines.join('\n') + '\n' : '';
}

export function jsonLines(fields: Field[], batches: Batch[]): string {
  return batches.map((b) => jsonlLines(fields, b)).join('');
}

/** A cell for the terminal: floats to 12 significant digits (sums differ in the last bits with the summing order). */
function displayText(c: Column, i: number): string {
  const t = cellText(c, i);
  if (t === null) return 'NULL';
  if (c.type.id !== 'float32' && c.type.id !== 'float64') return t;
  const v = c.values[i] as number;
  return Number.isFinite(v) ? String(Number(v.toPrecision(12))) : t;
}

/** The terminal view: the first rows as an aligned table, then the row count (and `more`, when rows were left out). */
export function formatTable(fields: Field[], batches: Batch[], maxRows = 20, more = ''): string {
  const total = rowCount(batches);
  const rows: string[][] = [];
  for (const b of batches) {
    for (let i = 0; i < b.length && rows.length < maxRows; i++) rows.push(b.columns.map((c) => displayText(c, i)));
    if (rows.length >= maxRows) break;
  }
  const header = fields.map((f) => f.name);
  const width = header.map((h, k) => Math.min(40, Math.max(h.length, ...rows.map((r) => r[k].length))));
  const cut = (s: string, w: number) => (s.length > w ? s.slice(0, w - 1) + '…' : s);
  const numeric = fields.map((f) => !['utf8', 'bool', 'date32', 'timestamp'].includes(f.type.id));
  const line = (cells: string[], head = false) =>
    cells
      .map((s, k) => (numeric[k] && !head ? cut(s, width[k]).padStart(width[k]) : cut(s, width[k]).padEnd(width[k])))
      .join(' | ');
  const out = [line(header, true), width.map((w) => '-'.repeat(w)).join('-+-'), ...rows.map((r) => line(r))];
  const left = total > rows.length ? `, showing the first ${rows.length}${more ? `; ${more}` : ''}` : '';
  out.push(`(${total} row${total === 1 ? '' : 's'}${left})`);
  return out.join('\n') + '\n';
}
