// A size as the plan gives it ("256MB", 1048576) in bytes, after validation
// (spec.ts's ByteSize): kept apart from the zod schemas so that the start-up's
// guess (cli/prestart.ts) can read a plan's sizes before zod loads.

export function parseBytes(v: number | string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v === 'number') return v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v)!;
  const units: Record<string, number> = {
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
  return Math.round(Number(m[1]) * units[m[2].toLowerCase()]);
}
