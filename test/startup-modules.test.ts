// What a command line run loads on its calling thread before its first task: every module is start-up time on the
// critical path (docs/performance.md, "SQL's worker pool started ahead"). A resolve hook (module.register) logs each
// module the process resolves; a SQL run printing JSON lines or the terminal table resolves no Arrow JS (about 100
// modules, 60-90 ms), which only an Arrow output (or the library's toArrow) needs. The Arrow output is the check that
// the hook sees Arrow JS when it does load.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-startup-');
const hooks = path.join(dir, 'hooks.mjs');

beforeAll(async () => {
  await writeParquet(path.join(dir, 't.parquet'), 'SELECT i::BIGINT AS k, i % 7 AS g FROM range(0, 2000) t(i)');
  fs.writeFileSync(
    hooks,
    `export async function resolve(specifier, context, next) {
      const r = await next(specifier, context);
      process.stderr.write('[resolved] ' + r.url + '\\n');
      return r;
    }\n`,
  );
});

/** The URLs the run resolved, and its exit status. */
function resolved(args: string[]): { urls: string[]; status: number | null; stderr: string } {
  const register = `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});`;
  const r = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, BIN, ...args, '--data', dir],
    { encoding: 'utf8' },
  );
  const urls = [...r.stderr.matchAll(/^\[resolved\] (.*)$/gm)].map((m) => m[1]);
  return { urls, status: r.status, stderr: r.stderr };
}

const arrow = (urls: string[]) => urls.filter((u) => u.includes('/apache-arrow/'));

describe('modules a SQL run loads', () => {
  const q = 'SELECT g, count(*) AS n FROM t GROUP BY g';
  it('JSON lines and the terminal table: no Arrow JS', () => {
    for (const out of [['--json'], []]) {
      const r = resolved(['sql', q, ...out]);
      expect(r.status, r.stderr).toBe(0);
      expect(r.urls.length).toBeGreaterThan(10);
      expect(arrow(r.urls)).toEqual([]);
    }
  });
  it('an Arrow output file loads it', () => {
    const r = resolved(['sql', q, '--output', path.join(dir, 'out.arrow')]);
    expect(r.status, r.stderr).toBe(0);
    expect(arrow(r.urls).length).toBeGreaterThan(0);
  });
});
