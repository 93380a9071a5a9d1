// Sizes ("256MB", 1048576) in bytes: one reading for every size option, in plans
// (after spec.ts's ByteSize), command-line flags and library options alike.
// Kept apart from the zod schemas so that the start-up's guess
// (cli/prestart.ts) can read a plan's sizes before zod loads.
import { PlanError } from '../errors.js';

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1024,
  mb: 1024 ** 2,
  gb: 1024 ** 3,
  tb: 1024 ** 4,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i;

/**
 * `--memory-limit 10` reads as 10 bytes, which nobody means: a budget written without a unit must be at least
 * this many bytes (a number in a plan or a library option is bytes, as typed; "10B" says so on purpose).
 */
const BARE_MEMORY_MIN = 1024 * 1024;

/**
 * The bytes of a size option: a number of bytes (>= 0), or text such as "64KB", "256MB", "1GB" (B, KB, MB, GB,
 * TB, KiB..TiB, case-insensitive; a bare number of digits is bytes). Anything else is a PlanError (exit 2)
 * naming the option (`option`: "--memory-limit", "options.skew.thresholdBytes", "execution.memoryLimit") and
 * the value received. `memory`: the option is a memory budget, refused as text without a unit under 1 MB.
 */
export function parseSize(option: string, v: unknown, memory = false): number {
  const shown = typeof v === 'string' ? JSON.stringify(v) : String(v);
  if (typeof v === 'number') {
    if (Number.isFinite(v) && v >= 0) return Math.round(v);
    throw new PlanError(
      option,
      `must be a number of bytes >= 0 or a size such as "64KB", "256MB", "1GB"; got ${shown}`,
    );
  }
  const m = typeof v === 'string' ? SIZE.exec(v) : null;
  const unit = m ? UNITS[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new PlanError(option, `must be a size such as 1048576, "64KB", "256MB" or "1GB"; got ${shown}`);
  }
  const bytes = Math.round(Number(m[1]) * unit);
  if (memory && m[2] === '' && bytes < BARE_MEMORY_MIN) {
    throw new PlanError(
      option,
      `${shown} would be ${bytes} bytes: write the unit (B, KB, MB, GB), e.g. "${m[1]}MB", or at least ${BARE_MEMORY_MIN} bytes`,
    );
  }
  return bytes;
}

/** parseSize, or `dflt` when the option is not given. */
export function parseBytes(option: string, v: unknown, dflt: number, memory = false): number {
  return v === undefined ? dflt : parseSize(option, v, memory);
}
