// Three queries at once in one library process, each given the same memoryLimit (docs/design/memory.md): they share
// one data budget, so the process's peak RSS stays near one query's. Prints wall time, peak RSS and the bytes each
// query spilled, and checks the three answers agree.
//   node scripts/concurrent-memory.mjs [--data DIR] [--rows N] [--limit 1GB] [--queries 3] [--lib dist/index.js]
//        [--sample MS] [--timeline FILE] [--gc MS]
// --sample MS reads the process's memory every MS milliseconds (RSS from /proc, the main thread's heap and array
// buffers, the data the budget counts as held, the stages running) and prints the sample at the peak RSS; --timeline
// writes every sample as a line of JSON.
import fs from 'node:fs';
import path from 'node:path';
import { gen, opt } from './bench-common.mjs';

const data = path.resolve(opt('data', '/tmp/concurrent-memory'));
const rows = Number(opt('rows', '50000000'));
const limit = opt('limit', '1GB');
const n = Number(opt('queries', '3'));
const lib = path.resolve(opt('lib', 'dist/index.js'));
const sampleMs = Number(opt('sample', '0'));
const timeline = opt('timeline', undefined);
gen(data, ['--rows', String(rows), '--keys', String(rows / 10), '--s', '1']);
const plan = JSON.parse(fs.readFileSync(new URL('../bench/ooc/groupby.json', import.meta.url), 'utf8'));
plan.sources = { fact: { parquet: path.join(data, 'fact.parquet') }, dim: { parquet: path.join(data, 'dim.parquet') } };
const { runPlan, closePool } = await import(lib);
// the budget's own count, where the build has it (dist/spill/spiller.js beside the library)
const spiller = path.join(path.dirname(lib), 'spill', 'spiller.js');
const processMemory = fs.existsSync(spiller) ? (await import(spiller)).processMemory : undefined;

const MiB = 2 ** 20;
/** RssAnon, RssFile and RssShmem of /proc/self/status in MiB (the kernel's split of the RSS). */
function procStatus() {
  const s = fs.readFileSync('/proc/self/status', 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile'), shmem: kb('RssShmem') };
}
const running = Array.from({ length: n }, () => '');
/**
 * Anonymous RSS of /proc/self/smaps by kind of mapping, in MiB: glibc's thread arenas (mappings of 32-64 MiB mostly
 * resident), WebAssembly memories (reservations of 4 GiB and more), the main heap (brk), and the other anonymous
 * mappings (V8's heap pages, buffers mmapped on their own) by size of mapping, those over 64 MiB listed.
 */
function smaps() {
  const out = { brk: 0, arena64: 0, wasm: 0, small: 0, mid: 0, large: 0, count: 0, over64: [] };
  let size = 0,
    name = '';
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      size = (parseInt(head[2], 16) - parseInt(head[1], 16)) / MiB;
      name = head[3];
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss || (name && name !== '[heap]')) continue;
    const r = Number(rss[1]) / 1024;
    if (name === '[heap]') out.brk += r;
    else if (size >= 4096) out.wasm += r;
    else if (size <= 64 && size > 32 && r > 0.8 * size) out.arena64 += r;
    else if (size < 1) out.small += r;
    else if (size < 32) out.mid += r;
    else {
      out.large += r;
      if (size > 64) out.over64.push(Math.round(r));
    }
    if (r > 0) out.count++;
  }
  for (const k of Object.keys(out)) if (k !== 'over64') out[k] = Math.round(out[k]);
  return out;
}
let peak = null,
  lastSmaps = 0;
const samples = [];
const t0 = performance.now();
function sample() {
  const p = procStatus();
  const m = process.memoryUsage();
  const s = {
    t: +((performance.now() - t0) / 1000).toFixed(2),
    rssMiB: Math.round(p.rss),
    anonMiB: Math.round(p.anon),
    fileMiB: Math.round(p.file),
    shmemMiB: Math.round(p.shmem),
    heapUsedMiB: Math.round(m.heapUsed / MiB),
    arrayBuffersMiB: Math.round(m.arrayBuffers / MiB),
    externalMiB: Math.round(m.external / MiB),
    heldMiB: processMemory ? Math.round(processMemory().held / MiB) : undefined,
    stages: running.slice(),
  };
  if (performance.now() - lastSmaps > 1000) {
    lastSmaps = performance.now();
    s.smaps = smaps();
  }
  if (timeline) samples.push(s);
  if (!peak || s.rssMiB > peak.rssMiB) peak = { ...s, smaps: s.smaps ?? smaps() };
}
const timer = sampleMs > 0 ? setInterval(sample, sampleMs) : undefined;
// an experiment: a major collection of the main thread every --gc MS (run node with --expose-gc)
const gcMs = Number(opt('gc', '0'));
const collector = gcMs > 0 ? setInterval(() => globalThis.gc(), gcMs) : undefined;
const onProgress = (i) => (e) => {
  running[i] = e.running.map((r) => r.stage).join(',');
};
const runs = await Promise.all(
  Array.from({ length: n }, (_, i) =>
    runPlan(plan, { workers: 2, memoryLimit: limit, ...(sampleMs > 0 ? { onProgress: onProgress(i) } : {}) }),
  ),
);
if (timer) clearInterval(timer);
if (collector) clearInterval(collector);
const wall = (performance.now() - t0) / 1000;
const answers = new Set(runs.map((r) => JSON.stringify(r.toRows(), (_, v) => (typeof v === 'bigint' ? String(v) : v))));
console.log(
  JSON.stringify({
    lib,
    rows,
    limit,
    queries: n,
    wallS: +wall.toFixed(1),
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    spilledMiB: runs.map((r) => Math.round(r.stats.spilledBytes / MiB)),
    sameAnswer: answers.size === 1,
    ...(peak ? { atPeak: peak } : {}),
  }),
);
if (timeline) fs.writeFileSync(timeline, samples.map((s) => JSON.stringify(s)).join('\n') + '\n');
await closePool();
