// Results of the final stage handed on in the order their tasks were started
// (a scan's output keeps the order of its files), each as soon as every
// earlier one has been handed on: the rest need not wait for the slowest.
import type { Batch } from '../kernels/column.js';

export class InOrder {
  private next = 0;
  private issued = 0;
  private waiting = new Map<number, Batch[]>();
  constructor(private readonly emit: (batches: Batch[]) => void) {}

  /** A place in the order, taken when a task starts. */
  ticket(): number { return this.issued++; }

  done(ticket: number, batches: Batch[]): void {
    this.waiting.set(ticket, batches);
    for (let b = this.waiting.get(this.next); b !== undefined; b = this.waiting.get(this.next)) {
      this.waiting.delete(this.next++);
      this.emit(b);
    }
  }
}
