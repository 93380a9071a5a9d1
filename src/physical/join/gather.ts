// Joined rows gathered from chunks of matches (the reused pair buffers of
// kernels/join.ts), one output batch per OUTPUT_ROWS rows: shared by the
// reduce side's streaming join and the map side's broadcast probe.
import { type Batch, gatherMany } from '../../kernels/column.js';
import type { PairChunk } from '../../shuffle/cut-pairs.js';

/** Rows gathered per output batch of a join. */
const OUTPUT_ROWS = 1 << 16;

export class GatherSink {
  readonly batches: Batch[] = [];
  /** the matches not gathered yet (all of them when kept: see `keep`) */
  pending: PairChunk[] = [];
  private rows = 0;
  /**
   * `keep`: gather nothing, keep every match for the caller (shuffle/cut-pairs.ts gathers them straight into
   * ranges)
   */
  constructor(
    readonly withRight: boolean,
    private readonly keep = false,
  ) {}

  add(l: Batch, r: Batch, li: Int32Array, ri: Int32Array, n: number) {
    this.pending.push({ l, r, li: li.slice(0, n), ri: ri.slice(0, n) });
    this.rows += n;
    if (this.rows >= OUTPUT_ROWS && !this.keep) this.flush();
  }

  flush() {
    const p = this.pending;
    if (p.length === 0) return;
    const cols = p[0].l.columns.map((c, i) =>
      gatherMany(
        c.type,
        p.map((x) => x.l.columns[i]),
        p.map((x) => x.li),
      ),
    );
    if (this.withRight) {
      p[0].r.columns.forEach((c, i) =>
        cols.push(
          gatherMany(
            c.type,
            p.map((x) => x.r.columns[i]),
            p.map((x) => x.ri),
          ),
        ),
      );
    }
    this.batches.push({ length: this.rows, columns: cols });
    this.pending = [];
    this.rows = 0;
  }
}
