// What the whole-process benchmark scripts share: paths, `--name value`
// options, data made by `skewjoin gen` when missing, one process timed by
// /usr/bin/time, and the median of the runs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const BIN = path.join(ROOT, 'bin', 'skewjoin.js');
export const DUCK = path.join(ROOT, 'scripts', 'duck-query.mjs');

const args = process.argv.slice(2);
/** The value after `--name` on the command line, else `dflt`. */
export const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};

/** `--flags "A B"`: more flags for every run of skewjoin (split at spaces). */
export const extraFlags = () => opt('flags', '').split(' ').filter(Boolean);

/** `skewjoin gen --out dir ...flags`, unless dir has its tables already. */
export function gen(dir, flags) {
  if (fs.existsSync(path.join(dir, 'dim.parquet'))) return;
  const r = spawnSync(process.execPath, [BIN, 'gen', '--out', dir, ...flags], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`skewjoin gen ${flags.join(' ')} failed`);
}

/**
 * One process under /usr/bin/time: its exit status and output, wall, user and
 * system seconds and peak RSS in MB (NaN where time printed nothing).
 */
export function timeProcess(argv, env = {}) {
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', ...argv], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    env: { ...process.env, ...env },
  });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)\s*$/.exec(r.stderr);
  const [wall, user, sys, rss] = m ? m.slice(1).map(Number) : [NaN, NaN, NaN, NaN];
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    timed: m !== null,
    wall,
    user,
    sys,
    rssMB: rss / 1024,
  };
}

/** The median of the numbers that are not NaN (NaN when none is). */
export const median = (xs) => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b),
    n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

/**
 * TPC-H query q's official SQL (test/tpch/qNN.sql) with its ${NAME} placeholders set to the parameter defaults
 * of plans/tpch/qNN.json (the specification's validation values), and that plan.
 */
export function tpchSql(q) {
  const plan = JSON.parse(fs.readFileSync(path.join(ROOT, 'plans', 'tpch', `${q}.json`), 'utf8'));
  const params = Object.fromEntries(Object.entries(plan.params ?? {}).map(([k, v]) => [k, v.default]));
  const text = fs.readFileSync(path.join(ROOT, 'test', 'tpch', `${q}.sql`), 'utf8').replace(/\$\{(\w+)\}/g, (_, n) => {
    if (!(n in params)) throw new Error(`${q}.sql: no value for ${n}`);
    return String(params[n]);
  });
  return { plan, text };
}
