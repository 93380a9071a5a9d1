// The spill folder of one query: created (and proved writable) before any
// work starts, removed when the query ends however it ends (io/cleanup.ts
// also removes it on exit and on SIGINT/SIGTERM). A run killed outright leaves
// its folder: the next one made beside it removes those of dead processes.
import fs from 'node:fs';
import path from 'node:path';
import { ExecutionError, PlanError } from '../errors.js';
import { registerCleanup } from '../io/cleanup.js';
import { makeFolders } from '../io/folders.js';

/** Why a file operation failed, as its error code when it has one. */
const reason = (e: unknown) => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

/** Debug knob: a disk that holds this many spill bytes per query, then fails with ENOSPC (tests of a full disk). */
const diskBytes = () => {
  const v = process.env.SKEWJOIN_DEBUG_SPILL_DISK_BYTES;
  return v ? Number(v) : Infinity;
};

/** A spill folder's name: the pid of the process that made it, then mkdtemp's six characters. */
const SPILL_NAME = /^skewjoin-spill-(\d+)-[A-Za-z0-9]{6}$/;

/** Parents swept by this process: once each (a temp folder may hold many entries; dead runs do not come back). */
const swept = new Set<string>();

/** Whether process `pid` runs: signal 0 checks without sending (EPERM: it runs, as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Spill folders that runs which were killed left in `parent` (SIGKILL, a terminated thread: no exit handler ran),
 * removed: ours only, by their name and owner, and only when the process their name gives runs no more. Nothing
 * here fails the query: a folder that cannot be read or removed stays.
 */
function sweepDeadSpills(parent: string): void {
  const uid = process.getuid?.();
  let names: string[];
  try {
    names = fs.readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const m = SPILL_NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || alive(pid)) continue;
    const dir = path.join(parent, name);
    try {
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      /* another process swept it first, or it is not ours to remove */
    }
  }
}

export class SpillFolder {
  readonly dir: string;
  private files = 0;
  private written = 0;
  private readonly capacity = diskBytes();

  /** `field` names the setting in errors (the plan's JSON path). */
  constructor(parent: string, field = 'execution.spillDir') {
    try {
      makeFolders(parent); // one level at a time: a recursive mkdir spins where a level cannot be made (/proc)
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
    const dir = this.dir;
    if (!swept.has(parent)) {
      swept.add(parent);
      sweepDeadSpills(parent);
    }
    this.remove = registerCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  }

  /** Remove the folder and every spill file in it (synchronous: also the exit and signal handlers' way). */
  readonly remove: () => void;

  /** unlinks started by discard() */
  private unlinking: Promise<unknown>[] = [];

  /**
   * Spill files nobody reads any more, unlinked now in the background: the
   * kernel frees their pages while the query goes on, rather than all at the
   * end (2.5 GB of spill files took 0.7 s to unlink after the last task of
   * the out-of-core benchmark's sort, pages under writeback among them).
   */
  discard(files: Iterable<string>): void {
    for (const f of files) this.unlinking.push(fs.promises.unlink(f).catch(() => undefined));
  }

  /** remove(), with the files unlinked in parallel on libuv's threads; falls back to remove() on any error. */
  async removeAsync(): Promise<void> {
    try {
      await Promise.all(this.unlinking);
      const left = fs.existsSync(this.dir) ? fs.readdirSync(this.dir) : [];
      await Promise.all(left.map((f) => fs.promises.rm(path.join(this.dir, f), { force: true })));
    } catch {
      /* remove() below does it the plain way */
    }
    this.remove();
  }

  /** Write a new spill file with `write(fd)` (which returns the bytes it wrote); errors name the folder. */
  writeFile<T extends { bytes: number }>(write: (fd: number, file: string) => T): T {
    const file = path.join(this.dir, `${this.files++}.spill`);
    let fd: number | undefined;
    try {
      fd = fs.openSync(file, 'w');
      const r = write(fd, file);
      this.written += r.bytes;
      if (this.written > this.capacity)
        throw Object.assign(new Error('no space left on device (simulated)'), { code: 'ENOSPC' });
      return r;
    } catch (e) {
      const code = reason(e);
      const why = code === 'ENOSPC' ? 'the disk is full (ENOSPC)' : `cannot write (${code})`;
      throw new ExecutionError(
        `spill folder ${path.dirname(this.dir)}: ${why} while spilling; free space or set execution.spillDir ` +
          `/ --spill-dir elsewhere`,
      );
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }
}
