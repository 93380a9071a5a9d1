// Where a result goes (issue 43, items 1 and 3): a regular file is replaced
// atomically, a symlink's target is written and the link kept, a FIFO or a
// device is written in place and stays what it was; `--output -` and
// `--format csv|jsonl` alone stream rows to standard output; a reader that
// closes the pipe early stops the query quietly, exit 0, no file left behind.
// All in a temporary folder: never the real /dev/stdout.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, cli, duckRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-targets-');
const at = (n: string) => path.join(dir, n);
const BIG_ROWS = 400_000;
const SMALL = `SELECT k, s FROM '${at('small.parquet')}' ORDER BY k`;
const EXPECTED = 'k,s\n0,s0\n1,s1\n2,s2\n';

beforeAll(async () => {
  await writeParquet(at('small.parquet'), `SELECT i::BIGINT AS k, 's' || i AS s FROM range(0, 3) t(i)`);
  await writeParquet(
    at('big.parquet'),
    `SELECT i::BIGINT AS id, 'row number ' || i AS s FROM range(0, ${BIG_ROWS}) t(i)`,
    20_000,
  );
});

const run = (args: string[]) => cli(['sql', ...args], dir);

describe('--output over what is already there', () => {
  it('a symlink: its target is replaced, the link stays a link', () => {
    fs.writeFileSync(at('real.csv'), 'old contents\n');
    fs.symlinkSync('real.csv', at('link.csv'));
    const r = run([SMALL, '--output', 'link.csv']);
    expect(r.code).toBe(0);
    expect(fs.lstatSync(at('link.csv')).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(at('link.csv'))).toBe('real.csv');
    expect(fs.readFileSync(at('real.csv'), 'utf8')).toBe(EXPECTED);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a dangling symlink: the file it names is created', () => {
    fs.symlinkSync('made.csv', at('dangling.csv'));
    expect(run([SMALL, '--output', 'dangling.csv']).code).toBe(0);
    expect(fs.lstatSync(at('dangling.csv')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(at('made.csv'), 'utf8')).toBe(EXPECTED);
  });

  it('a symlink to a device (/dev/null): written in place, the device untouched', () => {
    fs.symlinkSync('/dev/null', at('null.csv'));
    const r = run([SMALL, '--output', 'null.csv']);
    expect(r.code).toBe(0);
    expect(fs.lstatSync(at('null.csv')).isSymbolicLink()).toBe(true);
    expect(fs.statSync('/dev/null').isCharacterDevice()).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a FIFO: streamed into it, still a FIFO afterwards', async () => {
    const fifo = at('pipe.csv');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // the reader in a child process: were the FIFO replaced, its open would wait forever, and be killed
    const reader = spawn(
      process.execPath,
      ['-e', `require('fs').createReadStream(${JSON.stringify(fifo)}).pipe(process.stdout)`],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let text = '';
    reader.stdout.on('data', (d) => {
      text += d;
    });
    const read = new Promise((resolve) => reader.on('exit', resolve));
    const code = await new Promise((resolve) =>
      spawn(process.execPath, [BIN, 'sql', SMALL, '--output', fifo], { stdio: 'ignore' }).on('exit', resolve),
    );
    const timer = setTimeout(() => reader.kill('SIGKILL'), 10_000);
    await read;
    clearTimeout(timer);
    expect(code).toBe(0);
    expect(text).toBe(EXPECTED);
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true);
  });
});

describe('standard output', () => {
  it('--output - writes CSV to standard output, nothing else', () => {
    const r = run([SMALL, '--output', '-']);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, EXPECTED, '']);
    expect(fs.existsSync(at('-'))).toBe(false);
  });

  it('--format jsonl without a path writes JSON lines to standard output', () => {
    const r = run([SMALL, '--format', 'jsonl']);
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { k: 0, s: 's0' },
      { k: 1, s: 's1' },
      { k: 2, s: 's2' },
    ]);
  });

  it('--format json without a path writes one JSON array to standard output', () => {
    const r = run([SMALL, '--format', 'json']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toBe('[\n{"k":0,"s":"s0"},\n{"k":1,"s":"s1"},\n{"k":2,"s":"s2"}\n]\n');
    expect(JSON.parse(run([SMALL, '--output', '-', '--format', 'json']).stdout)).toHaveLength(3);
  });

  it('every row of a larger scan, in file order, as DuckDB reads the file', async () => {
    const query = `SELECT id, s FROM '${at('big.parquet')}' WHERE id % 7 = 0`;
    // more than spawnSync's default 1 MB of output
    const r = spawnSync(process.execPath, [BIN, 'sql', query, '--output', '-', '--workers', '2'], {
      cwd: dir,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const want = await duckRows(`SELECT id, s FROM '${at('big.parquet')}' WHERE id % 7 = 0`);
    expect(lines.length).toBe(want.length + 1);
    expect(lines[1]).toBe(`${want[0][0]},${want[0][1]}`);
    expect(lines.at(-1)).toBe(`${want.at(-1)![0]},${want.at(-1)![1]}`);
  });

  it('a binary format is refused there, naming the flag', () => {
    const r = run([SMALL, '--output', '-', '--format', 'parquet']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--format: standard output \("-"\) takes csv, jsonl, json, got "parquet"/);
    expect(run([SMALL, '--format', 'arrow']).stderr).toMatch(/--format: arrow needs --output PATH/);
  });
});

describe('a reader that closes the pipe early (| head -1)', () => {
  it('stops the query at once: exit 0, no stack trace, no spill or temporary file left', async () => {
    const spill = tmpDir('sj-epipe-spill-');
    const query = `SELECT id, s FROM '${at('big.parquet')}'`;
    const p = spawn(process.execPath, [BIN, 'sql', query, '--output', '-', '--workers', '2', '--spill-dir', spill], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SKEWJOIN_DEBUG: '' },
    });
    let stderr = '';
    p.stderr.on('data', (d) => {
      stderr += d;
    });
    let got = 0;
    let closedAt = 0;
    p.stdout.on('data', (d: Buffer) => {
      got += d.length;
      // the first rows (past the header): the reader has what it wanted
      if (got > 100 && !closedAt) {
        closedAt = performance.now();
        p.stdout.destroy();
      }
    });
    const code = await new Promise((resolve) => p.on('exit', (c, s) => resolve(c ?? s)));
    const afterClose = performance.now() - closedAt;
    expect(closedAt).toBeGreaterThan(0);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    // 400,000 rows are ~9 MB of CSV: the reader took a small part of them
    expect(got).toBeLessThan(4_000_000);
    expect(afterClose).toBeLessThan(5000);
    expect(fs.readdirSync(spill)).toEqual([]);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('--help into a closed pipe: exit 0, nothing on stderr', async () => {
    const p = spawn(process.execPath, [BIN, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout.destroy();
    let stderr = '';
    p.stderr.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise((resolve) => p.on('exit', (c, s) => resolve(c ?? s)));
    expect([code, stderr]).toEqual([0, '']);
  });
});
