// docs/architecture.md's "Every file of `src/`" from the sources: each file with the first sentence of its own
// comment, and where it runs: *(workers)* for the files a worker thread loads (the import closure of
// src/runtime/worker.ts; they run on the coordinator too, for a run in its thread), the others on the coordinator
// alone. Prints the section; --write replaces it in the doc, --check exits 1 when the doc differs.
//   node scripts/architecture-files.mjs [--write | --check]
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './bench-common.mjs';

const DOC = path.join(ROOT, 'docs', 'architecture.md');
const HEAD = '## Every file of `src/`';

/** A folder's .ts files, then its folders', each sorted by name. */
function walk(dir) {
  const entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  return [
    ...entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(dir, e.name)),
    ...entries.filter((e) => e.isDirectory()).flatMap((e) => walk(path.join(dir, e.name))),
  ];
}

/** The files `start` loads, transitively (relative imports, static and dynamic, `.js` as the `.ts` source). */
function closure(start) {
  const seen = new Set(),
    todo = [start];
  while (todo.length) {
    const f = todo.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    const text = fs.readFileSync(f, 'utf8');
    // `import type` and `export type` are erased when compiled: not loaded
    for (const m of text.matchAll(/\b(?:(import|export)\s+(type\s+)?[^;'"]*?from|import\()\s*['"](\.[^'"]+)['"]/g)) {
      if (m[2]) continue;
      const p = path.resolve(path.dirname(f), m[3]).replace(/\.js$/, '.ts');
      if (fs.existsSync(p)) todo.push(p);
    }
  }
  return seen;
}

/** The first sentence of a file's leading comment (up to the first period followed by a space, or the line). */
function firstSentence(file) {
  const lines = [];
  for (const l of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*(?:\/\/|\/\*\*?|\*)\s?(.*?)\s*(?:\*\/)?$/.exec(l);
    if (!m) break;
    if (m[1] === '' && lines.length) break;
    if (m[1]) lines.push(m[1]);
  }
  const text = lines.join(' ');
  const end = /[.:](\s|$)/.exec(text);
  const s = end ? text.slice(0, end.index) : text;
  return s.length > 150 ? `${s.slice(0, 147)}…` : s;
}

const src = path.join(ROOT, 'src');
const worker = closure(path.join(src, 'runtime', 'worker.ts'));
let section =
  `${HEAD}\n\nThe first sentence of each file's own comment, generated from the sources by ` +
  '`node scripts/architecture-files.mjs --write` (run it when adding a file). *(workers)*: loaded by the worker ' +
  'threads (the import closure of `runtime/worker.ts`), which run every task; these run on the coordinator too when ' +
  'a run stays in its thread. Every other file runs on the coordinator (the calling thread) alone.\n\n';
let dir = '';
for (const f of walk(src)) {
  const d = `${path.relative(ROOT, path.dirname(f))}/`;
  if (d !== dir) section += `- \`${(dir = d)}\`\n`;
  section += `  - \`${path.basename(f)}\`${worker.has(f) ? ' *(workers)*' : ''}: ${firstSentence(f)}\n`;
}

const doc = fs.readFileSync(DOC, 'utf8');
const at = doc.indexOf(HEAD);
const next = doc.indexOf('\n## ', at + HEAD.length);
const updated = `${doc.slice(0, at)}${section}${next < 0 ? '' : doc.slice(next)}`;
if (process.argv.includes('--write')) fs.writeFileSync(DOC, updated);
else if (process.argv.includes('--check')) {
  if (updated !== doc) {
    console.error(
      'docs/architecture.md: the file list differs from src/ (node scripts/architecture-files.mjs --write)',
    );
    process.exit(1);
  }
} else process.stdout.write(section);
