// Spill folders that killed runs left behind (SIGKILL, a terminated vitest thread: no exit handler ran) are removed
// when the next spill folder is made beside them: only those named for a process that no longer runs, owned by us.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SpillFolder } from '../dist/spill/folder.js';
import { tmpDir } from './helpers.js';

const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
afterAll(() => {
  sleeper.kill();
});

describe('spill folders of dead processes', () => {
  it('a folder named for a dead pid is removed, one for a live pid and anything else named alike are kept', () => {
    const parent = tmpDir('sj-sweep-');
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    expect(() => process.kill(dead, 0)).toThrow();
    const live = sleeper.pid!;
    const make = (name: string, file = true) => {
      const d = path.join(parent, name);
      fs.mkdirSync(d);
      if (file) fs.writeFileSync(path.join(d, '0.spill'), 'rows');
      return d;
    };
    const deadDir = make(`skewjoin-spill-${dead}-AbC123`);
    const deadEmpty = make(`skewjoin-spill-${dead}-zzzzzz`, false);
    const liveDir = make(`skewjoin-spill-${live}-AbC123`);
    const ours = make(`skewjoin-spill-${process.pid}-qwerty`);
    const otherName = make(`skewjoin-spill-${dead}-abc`); // not mkdtemp's six characters
    const notSpill = make(`other-spill-${dead}-AbC123`);
    const aFile = path.join(parent, `skewjoin-spill-${dead}-file00`);
    fs.writeFileSync(aFile, '');
    const f = new SpillFolder(parent);
    try {
      expect(fs.existsSync(deadDir)).toBe(false);
      expect(fs.existsSync(deadEmpty)).toBe(false);
      for (const kept of [liveDir, ours, otherName, notSpill, aFile, f.dir])
        expect(fs.existsSync(kept), kept).toBe(true);
    } finally {
      f.remove();
    }
    expect(fs.existsSync(f.dir)).toBe(false);
  });
});
