// docs/architecture.md lists every file of src/ and where it runs (scripts/architecture-files.mjs): a file added,
// removed or moved between the workers and the coordinator without the doc following fails here.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

describe('docs/architecture.md', () => {
  it('places every file of src/ (node scripts/architecture-files.mjs --write regenerates the list)', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'architecture-files.mjs'), '--check'], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
