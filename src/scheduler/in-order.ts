// Results of the final stage handed on in the order their tasks were started
// (a scan's output keeps the order of its files), each as soon as every
// earlier one has been handed on: the rest need not wait for the slowest.
// Tasks start through a gate: at most `inFlight` of them between starting and
// their results being consumed (a writer that falls behind holds the rest
// back, so finished results do not pile up in memory), and none once the
// consumer has enough (a limit without a sort).
import type { Streamed } from '../physical/operator.js';

export class InOrder {
  private next = 0;
  private issued = 0;
  /** tasks started whose results are not consumed yet */
  private out = 0;
  private waiting = new Map<number, Streamed>();
  private gate: (() => void)[] = [];
  private enough = false;

  /**
   * `emit` may return a promise: the results count as in flight until it settles.
   * It returns true when the consumer needs no more rows.
   */
  constructor(
    private readonly emit: (out: Streamed) => Promise<unknown> | boolean | void,
    private readonly inFlight = Infinity,
  ) {}

  /** A place in the order, taken when a task is asked for; call admit() with it at once. */
  ticket(): number {
    return this.issued++;
  }

  /**
   * Resolves when the ticket's task may start (in ticket order): true, or false
   * when the consumer has enough rows (the task is skipped, done() with no rows).
   */
  async admit(): Promise<boolean> {
    if (this.gate.length > 0 || this.out >= this.inFlight)
      await new Promise<void>((resolve) => this.gate.push(resolve));
    else this.out++;
    return !this.enough;
  }

  /** Let waiting tasks start, in order, while fewer than `inFlight` are out (all of them once there is enough). */
  private pump(): void {
    while (this.gate.length > 0 && (this.enough || this.out < this.inFlight)) {
      this.out++;
      this.gate.shift()!();
    }
  }

  private consumed = () => {
    this.out--;
    this.pump();
  };

  done(ticket: number, out: Streamed): void {
    this.waiting.set(ticket, out);
    for (let b = this.waiting.get(this.next); b !== undefined; b = this.waiting.get(this.next)) {
      this.waiting.delete(this.next++);
      const r = this.enough ? undefined : this.emit(b);
      if (r === true) this.enough = true;
      if (r instanceof Promise) r.then(this.consumed, this.consumed);
      else this.out--;
    }
    this.pump();
  }
}
