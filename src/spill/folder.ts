// The spill folder of one query: created (and proved writable) before any
// work starts, removed when the query ends however it ends, including on
// process exit and on SIGINT/SIGTERM (`removeSpillFolders` is the hook a
// signal handler that exits the process may call first; the 'exit' handler
// catches the rest).
import fs from 'node:fs';
import path from 'node:path';
import { ExecutionError, PlanError } from '../errors.js';

const live = new Set<string>();
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Remove every spill folder of this process that is still there (synchronous: safe in 'exit' and signal handlers). */
export function removeSpillFolders(): void {
  for (const dir of live) fs.rmSync(dir, { recursive: true, force: true });
  live.clear();
}

function onSignal(sig: NodeJS.Signals) {
  removeSpillFolders();
  unwatch();
  // Nobody else handles the signal: let it end the process as it would have without us.
  if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
}
const handlers = new Map(SIGNALS.map((s) => [s, () => onSignal(s)]));

function watch() {
  if (live.size > 0) return;
  process.on('exit', removeSpillFolders);
  for (const [s, h] of handlers) process.on(s, h);
}
function unwatch() {
  process.off('exit', removeSpillFolders);
  for (const [s, h] of handlers) process.off(s, h);
}

/** Why a file operation failed, as its error code when it has one. */
export const reason = (e: unknown) => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

/** Debug knob: a disk that holds this many spill bytes per query, then fails with ENOSPC (tests of a full disk). */
const diskBytes = () => {
  const v = process.env.SKEWJOIN_DEBUG_SPILL_DISK_BYTES;
  return v ? Number(v) : Infinity;
};

export class SpillFolder {
  readonly dir: string;
  private files = 0;
  private written = 0;
  private readonly capacity = diskBytes();

  /** `field` names the setting in errors (the plan's JSON path). */
  constructor(parent: string, field = 'execution.spillDir') {
    try {
      fs.mkdirSync(parent, { recursive: true });
      this.dir = fs.mkdtempSync(path.join(parent, `skewjoin-spill-${process.pid}-`));
    } catch (e) {
      throw new PlanError(field, `spill folder ${parent} cannot be created or written (${reason(e)})`);
    }
    try {
      // mkdtemp proves the parent writable, not the new folder (a read-only mount with odd permissions)
      fs.writeFileSync(path.join(this.dir, 'probe'), '');
      fs.rmSync(path.join(this.dir, 'probe'));
    } catch (e) {
      fs.rmSync(this.dir, { recursive: true, force: true });
      throw new PlanError(field, `spill folder ${parent} cannot be written (${reason(e)})`);
    }
    watch();
    live.add(this.dir);
  }

  /** Write a new spill file with `write(fd)` (which returns the bytes it wrote); errors name the folder. */
  writeFile<T extends { bytes: number }>(write: (fd: number, file: string) => T): T {
    const file = path.join(this.dir, `${this.files++}.spill`);
    let fd: number | undefined;
    try {
      fd = fs.openSync(file, 'w');
      const r = write(fd, file);
      this.written += r.bytes;
      if (this.written > this.capacity) throw Object.assign(new Error('no space left on device (simulated)'), { code: 'ENOSPC' });
      return r;
    } catch (e) {
      const code = reason(e);
      const why = code === 'ENOSPC' ? 'the disk is full (ENOSPC)' : `cannot write (${code})`;
      throw new ExecutionError(`spill folder ${path.dirname(this.dir)}: ${why} while spilling; free space or set execution.spillDir / --spill-dir elsewhere`);
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
    live.delete(this.dir);
    if (live.size === 0) unwatch();
  }
}
