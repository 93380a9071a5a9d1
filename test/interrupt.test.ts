// Ctrl-C and SIGTERM on the command line: exit 130, the temporary output file
// removed, no result left behind.
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-int-');
const out = path.join(dir, 'out');

beforeAll(async () => {
  fs.mkdirSync(out);
  await writeParquet(
    path.join(dir, 'big.parquet'),
    `SELECT i::BIGINT AS id, (i % 1000)::BIGINT AS k, 'row number ' || i AS s FROM range(0, 600000) t(i)`,
    50000,
  );
});

/** Start the CLI writing every row to CSV; send `signal` once `when` holds for the output folder. */
function interrupt(
  signal: NodeJS.Signals,
  when: (files: string[]) => boolean,
): Promise<{ code: number | null; stderr: string; sentWith: string[] }> {
  const plan = writePlan(dir, {
    version: 1,
    sources: { a: { parquet: 'big.parquet' } },
    query: { op: 'scan', source: 'a' },
    output: { path: 'out/rows.csv' },
  });
  const p = spawn(process.execPath, [BIN, plan, '--workers', '2'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, SKEWJOIN_FAULTS: '' },
  });
  let stderr = '';
  p.stderr.on('data', (d) => {
    stderr += d;
  });
  let sentWith: string[] = [];
  const poll = setInterval(() => {
    const files = fs.readdirSync(out);
    if (when(files)) {
      sentWith = files;
      p.kill(signal);
      clearInterval(poll);
    }
  }, 5);
  return new Promise((resolve) =>
    p.on('exit', (code) => {
      clearInterval(poll);
      resolve({ code, stderr, sentWith });
    }),
  );
}

describe('interrupting the CLI', () => {
  it('SIGINT while the output is being written: exit 130, the temporary file removed', async () => {
    const r = await interrupt('SIGINT', (files) => files.some((f) => f.endsWith('.tmp')));
    expect(r.sentWith.some((f) => f.endsWith('.tmp'))).toBe(true); // the signal came while the temporary file existed
    expect(r.code).toBe(130);
    expect(r.stderr).toBe('skewjoin: interrupted (SIGINT)\n');
    expect(fs.readdirSync(out)).toEqual([]);
  }, 60_000);

  it('SIGTERM: the same', async () => {
    const r = await interrupt('SIGTERM', (files) => files.some((f) => f.endsWith('.tmp')));
    expect(r.code).toBe(130);
    expect(r.stderr).toBe('skewjoin: interrupted (SIGTERM)\n');
    expect(fs.readdirSync(out)).toEqual([]);
  }, 60_000);
});
