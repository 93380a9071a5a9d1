// Whether a broadcast decision stands (join/broadcast.ts): the table must fit the memory budget left, and a shared
// build (a side over broadcastBytes, built on one thread) must spare the shuffle of enough rows on the other side.
import { type BroadcastDecision, SHARED_BUILD_RATIO, SHARED_BUILD_ROWS, type Side } from './decide.js';
import type { BoundNode } from '../../plan/bound.js';
import { type Pipeline, pipelineOf } from '../pipeline.js';

/** A side read to measure it: its rows and bytes, and the pipeline of its rest (null: read whole). */
interface Read {
  rows: number;
  bytes: number;
  rest: Pipeline | null;
}

/**
 * The rows a side read would have read whole: its rows, or for a scan stopped at a cap, the rows read scaled by
 * the rows of its splits over those of the splits it read; unread, the rows of its files (before filters).
 */
function projectedRows(n: BoundNode, m?: Read): number {
  if (m?.rest === null) return m.rows;
  if (!m) return scanRows(n);
  return m.rows * scale(n, m);
}

/** How many times the rows read a side read whole would be: its splits' rows over those of the splits it read. */
function scale(n: BoundNode, m: Read): number {
  if (m.rest === null) return 1;
  const rows = (p: Pipeline) => (p.source.kind === 'scan' ? p.source.splits.reduce((a, x) => a + x.rows, 0) : 0);
  const all = rows(pipelineOf(n)),
    done = all - rows(m.rest);
  return done > 0 ? all / done : Infinity;
}

/**
 * Whether a scan stopped at broadcastBytes is worth reading on for a shared build: projected from the splits read,
 * its bytes within `bound` and its rows within SHARED_BUILD_ROWS, with a quarter's slack (a filter's rows need not
 * be spread evenly over the splits). Otherwise its rows read would be held, then shuffled all the same (q04 at
 * SF 10: 256 MB of line items).
 */
export function worthReadingOn(n: BoundNode, m: Read, bound: number): boolean {
  const k = 1.25 * scale(n, m);
  return m.bytes * k <= 1.25 * 1.25 * bound && m.rows * k <= 1.25 * 1.25 * SHARED_BUILD_ROWS;
}

/** The rows of the scans under a node before filters; of a join, its larger side's (a fact table's, say). */
function scanRows(n: BoundNode): number {
  if (n.kind === 'scan') return n.splits.reduce((a, x) => a + x.rows, 0);
  if (n.kind === 'join') return Math.max(scanRows(n.left), scanRows(n.right));
  if (n.kind === 'union') return Math.max(0, ...n.inputs.map(scanRows));
  if (n.kind === 'values') return n.rows.length;
  return scanRows(n.input);
}

/**
 * A broadcast decision kept, or turned into a shuffle: the table is held for the whole probe, so it must fit the
 * budget left (`free`); a shared build (a side over broadcastBytes, built on one thread) takes at most
 * SHARED_BUILD_ROWS rows and must have at least SHARED_BUILD_RATIO times its rows on the other side, whose rows it
 * then spares the shuffle.
 */
export function checked(
  node: Extract<BoundNode, { kind: 'join' }>,
  decision: BroadcastDecision,
  read: Partial<Record<Side, Read>>,
  threshold: number,
  table: number,
  free: number,
): BroadcastDecision {
  const side = decision.side!,
    m = read[side]!;
  if (table > free) {
    return {
      strategy: 'shuffle',
      reason:
        `${side} side ${m.bytes} bytes <= broadcastBytes ${threshold}, but its table (${table} bytes with the hash ` +
        `table) exceeds the memory budget left (${free} bytes)`,
    };
  }
  if (m.bytes <= threshold) return decision;
  if (m.rows > SHARED_BUILD_ROWS) {
    return {
      strategy: 'shuffle',
      reason:
        `${side} side ${m.bytes} bytes > broadcastBytes ${threshold}: its ${m.rows} rows are more than a shared ` +
        `build takes (${SHARED_BUILD_ROWS}, built on one thread)`,
    };
  }
  const other: Side = side === 'left' ? 'right' : 'left';
  const rows = Math.round(projectedRows(other === 'left' ? node.left : node.right, read[other]));
  if (rows >= SHARED_BUILD_RATIO * m.rows) return { ...decision, reason: `${decision.reason}; ${rows} rows probe it` };
  return {
    strategy: 'shuffle',
    reason:
      `${side} side ${m.bytes} bytes > broadcastBytes ${threshold}: a shared build of its ${m.rows} rows needs ` +
      `${SHARED_BUILD_RATIO} times as many on the ${other} side (${rows} ` +
      `rows${read[other]?.rest === null ? '' : ', projected'})`,
  };
}
