// The Spark Connect connection as a cluster user meets it: the remote URL's rules (a token
// only over TLS, never printed; session_id, user_agent, headers), a result stream cut by a
// TCP proxy (resumed by ReattachExecute, or a clear error once the retries are spent), local
// files refused for a server on another machine, many files as one DataSource, and a URI
// output folder that holds files refused unless replacing is asked for.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { PlanError, runPlan } from '../dist/index.js';
import { LocalSparkServer } from '../dist/spark/server.js';
import { SparkConnectClient } from '../dist/spark/client.js';
import { parseRemote, redact } from '../dist/spark/remote.js';
import { BIN, cli, duckRows, expectSame, tmpDir, writeParquet, writePlan } from './helpers.js';
import { NO_SPARK, REMOTE, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-sparkconn-');
const SECRET = 'sekret-token-4711';

describe('the remote URL', () => {
  it('a token is refused over plaintext (exit 2) and never printed; use_ssl=true or localhost take it', () => {
    const file = writePlan(dir, { version: 1, sources: {}, query: { op: 'scan', source: 'x' } }, 'none.json');
    const r = cli([file, '--engine', 'spark', '--remote', `sc://127.0.0.1:15002/;token=${SECRET}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/token without use_ssl=true: a token is sent only over TLS/);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(() => parseRemote(`sc://spark.example.com/;token=${SECRET};use_ssl=false`)).toThrow(PlanError);
    expect(parseRemote(`sc://spark.example.com/;token=${SECRET};use_ssl=true`).ssl).toBe(true);
    expect(parseRemote(`sc://localhost:1/;token=${SECRET}`).ssl).toBe(false);
    expect(parseRemote(`sc://localhost:1/;token=${SECRET}`).url).toBe('sc://localhost:1/;token=***');
    expect(redact(`sc://h/;user_id=a;token=${SECRET};x=1`)).toBe('sc://h/;user_id=a;token=***;x=1');
  });

  it('session_id (a UUID), user_id and user_agent are the client’s; other parameters are gRPC headers', () => {
    const id = '00112233-4455-6677-8899-aabbccddeeff';
    const r = parseRemote(`sc://h:1/;session_id=${id};user_id=ann;user_agent=nb;x-team=etl`);
    expect([r.sessionId, r.userId, r.userAgent, r.headers]).toEqual([id, 'ann', 'nb', [['x-team', 'etl']]]);
    expect(() => parseRemote('sc://h/;session_id=12')).toThrow(/session_id .* expected a UUID/);
    expect(() => parseRemote('sc://h/;Bad Key=1')).toThrow(/cannot be a gRPC header/);
  });

  it('a local path for a server on another machine is refused before anything runs (exit 2)', async () => {
    const f = await writeParquet(path.join(dir, 'small.parquet'), 'SELECT 1 AS a');
    const file = writePlan(dir, { version: 1, sources: { s: { parquet: f } }, query: { op: 'scan', source: 's' } });
    // 192.0.2.1 (TEST-NET-1) is never reached: the refusal comes first
    const r = cli([file, '--engine', 'spark', '--remote', 'sc://192.0.2.1:15002']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/sources\.s.*is a path on this machine.*cannot read this machine's files.*give a URI/s);
  });
});

/** A fake Spark Connect server: Config answers with the server-side session ids given, in turn. */
async function fakeServer(sessions: string[]) {
  const grpc = await import('@grpc/grpc-js');
  const { encode, decode, str } = await import('../dist/spark/wire.js');
  const seen = { config: 0, released: [] as string[], headers: [] as Record<string, unknown>[] };
  const server = new grpc.Server();
  const unary = (name: string, answer: (req: Map<number, unknown>) => Uint8Array) =>
    server.register(
      `/spark.connect.SparkConnectService/${name}`,
      (call: any, cb: any) => {
        seen.headers.push(call.metadata.getMap());
        cb(null, answer(call.request));
      },
      (b: Uint8Array) => Buffer.from(b),
      (b: Buffer) => decode(b),
      'unary',
    );
  unary('Config', () => encode([[4, sessions[Math.min(seen.config++, sessions.length - 1)]]]));
  unary('ReleaseSession', (req) => {
    seen.released.push(str(req as never, 1));
    return encode([]);
  });
  const port = await new Promise<number>((r, j) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? j(e) : r(p))),
  );
  return { port, seen, stop: () => server.forceShutdown() };
}

describe('the client against a fake server', () => {
  it('a new server-side session id is a restart, said as such; headers sent; our session released, not the URL’s', async () => {
    const f = await fakeServer(['s-1', 's-1', 's-2']);
    try {
      const c = new SparkConnectClient(parseRemote(`sc://localhost:${f.port}/;token=${SECRET};x-team=etl`));
      await c.setConfig({ a: '1' });
      await c.setConfig({ a: '2' });
      const err = await c.setConfig({ a: '3' }).catch((e: Error) => e);
      expect(err?.message).toMatch(/server at localhost:\d+ restarted during the run \(its session s-1 is now s-2\)/);
      expect(err?.message).not.toContain(SECRET);
      expect(f.seen.headers[0]).toMatchObject({ 'x-team': 'etl', authorization: `Bearer ${SECRET}` });
      await c.close();
      expect(f.seen.released).toEqual([c.sessionId]);
      const id = '00112233-4455-6677-8899-aabbccddeeff';
      const mine = new SparkConnectClient(parseRemote(`sc://localhost:${f.port}/;session_id=${id}`));
      expect(mine.sessionId).toBe(id);
      await mine.close();
      expect(f.seen.released).toEqual([c.sessionId]);
    } finally {
      f.stop();
    }
  });
});

describe('skewjoin lower --to spark', () => {
  it('takes a .sql file and prints one clause a line, many files as one source', async () => {
    for (const i of [0, 1])
      await writeParquet(
        path.join(dir, `q${i}.parquet`),
        'SELECT (i % 5)::INT AS k, i::BIGINT AS v FROM range(20) t(i)',
      );
    const q = path.join(dir, 'q.sql');
    fs.writeFileSync(
      q,
      `SELECT k, SUM(v) AS total, COUNT(*) AS "row count", MIN(v) AS k_1, MAX(v) AS "K_1", AVG(v) AS "select" FROM '${dir}/q*.parquet' WHERE v > 3 GROUP BY k ORDER BY total DESC LIMIT 3`,
    );
    const r = cli(['lower', q]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/source __sj_src0: parquet, 2 paths: file:\/\/\/.*q0\.parquet, file:\/\/\/.*q1\.parquet/);
    expect(r.stdout).toMatch(/\n +FROM __sj_src0\n/);
    // the plan's own names inside; a name that is no plain identifier, a keyword or a clash (case aside) positional
    expect(r.stdout).toMatch(/\n +WHERE \(v > 3L\)\n/);
    expect(r.stdout).toMatch(/\n +GROUP BY k\n/);
    expect(r.stdout).toMatch(/\nsql:\nSELECT k, total, __sj2 AS `row count`, k_1, __sj4 AS `K_1`, __sj5 AS `select`\n/);
    expect(r.stdout).toMatch(/\n +ORDER BY total DESC NULLS LAST\n/);
    expect(r.stdout).toMatch(/\n +LIMIT 3\n/);
  });
});

/**
 * A TCP proxy on 127.0.0.1 in front of `port` (or the port a function gives each new connection): it cuts every
 * connection after `cutAfter` bytes from the server.
 */
function proxy(port: number | (() => number), cutAfter: (n: number) => number) {
  let connections = 0;
  let refuse = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const n = connections++;
    if (refuse) return client.destroy();
    const up = net.connect(typeof port === 'number' ? port : port(), '127.0.0.1');
    sockets.add(client).add(up);
    let bytes = 0;
    up.on('data', (b) => {
      bytes += b.length;
      if (bytes > cutAfter(n)) {
        client.destroy();
        up.destroy();
      } else client.write(b);
    });
    client.on('data', (b) => up.write(b));
    const end = () => {
      client.destroy();
      up.destroy();
    };
    client.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  return {
    listen: () =>
      new Promise<number>((r) => server.listen(0, '127.0.0.1', () => r((server.address() as net.AddressInfo).port))),
    get connections() {
      return connections;
    },
    refuseAll() {
      refuse = true;
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe.skipIf(NO_SPARK)('a result stream cut by a proxy', () => {
  const remote = () => parseRemote(REMOTE);
  // 40,000 rows of ~300 bytes: 12 MB, several Arrow batches of Spark Connect's 4 MB
  const SQL = "SELECT id, repeat('x', 300) AS s FROM range(0, 40000)";
  const read = async (client: SparkConnectClient) => {
    const arrow = await import('apache-arrow');
    let rows = 0,
      sum = 0n;
    await client.execute(SQL, (ev) => {
      if (ev.kind !== 'arrow') return;
      const t = arrow.tableFromIPC(ev.data);
      rows += t.numRows;
      const ids = t.getChild('id')!;
      for (let i = 0; i < ids.length; i++) sum += BigInt(ids.get(i));
    });
    return { rows, sum };
  };
  beforeAll(() => requireSpark());

  it('is resumed by ReattachExecute from the last response: every row once', async () => {
    const r = remote();
    // the first two connections are cut 5 MB into the answer, the later ones are left alone
    const p = proxy(r.port, (n) => (n < 2 ? 5_000_000 : Number.POSITIVE_INFINITY));
    const port = await p.listen();
    const client = new SparkConnectClient({ ...r, port }, { retries: 5, totalMs: 20_000 });
    try {
      expect(await read(client)).toEqual({ rows: 40000, sum: (39999n * 40000n) / 2n });
      expect(p.connections).toBeGreaterThan(1);
    } finally {
      await client.close();
      await p.close();
    }
  });

  it('a server gone for good: a clear error naming the address and the attempts, after bounded retries', async () => {
    const r = remote();
    const p = proxy(r.port, () => 2_000_000);
    const port = await p.listen();
    const client = new SparkConnectClient({ ...r, port }, { retries: 3, totalMs: 5000 });
    const t0 = Date.now();
    // the first connection is cut; every later one is refused
    const err = await read(client)
      .then(() => null)
      .catch((e: Error) => e);
    p.refuseAll();
    await client.close();
    await p.close();
    expect(Date.now() - t0).toBeLessThan(60_000);
    expect(err?.message).toMatch(
      new RegExp(`cannot reach the Spark Connect server at localhost:${port} .*tried \\d+ times`),
    );
  });
});

describe.skipIf(NO_SPARK)('data and output on Spark', () => {
  const parts = [0, 1, 2].map((i) => path.join(dir, `part${i}.parquet`));
  beforeAll(async () => {
    requireSpark();
    for (const [i, f] of parts.entries())
      await writeParquet(f, `SELECT (i % 7)::INT AS k, i + ${i * 1000} AS v FROM range(300) t(i)`);
  });

  it('many files of a source are one DataSource of their paths; --explain --analyze shows Spark’s plan, no token', async () => {
    const plan = {
      version: 1,
      sources: { p: { parquet: path.join(dir, 'part*.parquet') } },
      query: {
        op: 'aggregate',
        input: { op: 'scan', source: 'p' },
        groupBy: ['k'],
        aggregates: [{ fn: 'sum', column: 'v', as: 's' }],
      },
    };
    const glob = parts.map((f) => `'${f}'`).join(', ');
    await expectSame(plan, `SELECT k, SUM(v) AS s FROM read_parquet([${glob}]) GROUP BY k`, {
      engine: 'spark',
      remote: REMOTE,
    });
    const file = writePlan(dir, plan, 'parts.json');
    const stats = path.join(dir, 'stats.json');
    const r = cli([file, '--engine', 'spark', '--remote', REMOTE, '--explain', '--analyze', '--stats', stats]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/source __sj_src0: parquet, 3 paths/);
    expect(r.stdout).toMatch(/FROM __sj_src0/);
    expect(r.stdout).not.toMatch(/UNION ALL/);
    expect(r.stdout).toMatch(/Spark's physical plan:\n.*HashAggregate.*FileScan parquet/s);
    const token = /;token=([^;]+)/.exec(REMOTE)![1];
    expect(r.stdout + r.stderr + fs.readFileSync(stats, 'utf8')).not.toContain(token);
  });

  it('a URI output folder holding files is refused (exit 2) unless --replace-output', async () => {
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, 'keep.txt'), 'mine');
    const plan = {
      version: 1,
      sources: { p: { parquet: parts[0] } },
      query: { op: 'scan', source: 'p' },
      output: { path: pathToFileURL(out).href, format: 'parquet' },
    };
    const file = writePlan(dir, plan, 'write.json');
    const r = cli([file, '--engine', 'spark', '--remote', REMOTE]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/holds files .*keep\.txt.*--replace-output/);
    expect(fs.readFileSync(path.join(out, 'keep.txt'), 'utf8')).toBe('mine');
    const ok = cli([file, '--engine', 'spark', '--remote', REMOTE, '--replace-output', '--quiet']);
    expect(ok.stderr).toBe('');
    expect(fs.existsSync(path.join(out, 'keep.txt'))).toBe(false);
    const res = await runPlan(
      {
        version: 1,
        sources: { o: { parquet: `${pathToFileURL(out).href}/*.parquet` } },
        query: { op: 'scan', source: 'o' },
      },
      { engine: 'spark', remote: REMOTE },
    );
    expect(res.numRows).toBe(300);
  });
});

describe.skipIf(NO_SPARK)('a server killed and restarted mid-query', () => {
  it('the query runs again on the new server, in a new session with its settings pinned again: the right answer', async () => {
    requireSpark();
    const shared = parseRemote(REMOTE);
    // a first server of one core with the shared server's token; the proxy leads new connections to the shared
    // server once the first is killed: to the client, the server at that address restarted
    const first = await LocalSparkServer.start(1, { 'spark.sql.shuffle.partitions': '4' }, shared.token);
    let target = parseRemote(first.url).port;
    const p = proxy(
      () => target,
      () => Number.POSITIVE_INFINITY,
    );
    const port = await p.listen();
    try {
      const F = await writeParquet(
        path.join(dir, 'restart-fact.parquet'),
        'SELECT (i % 100000)::BIGINT AS k, i::BIGINT AS v FROM range(1000000) t(i)',
      );
      const D = await writeParquet(
        path.join(dir, 'restart-dim.parquet'),
        'SELECT i::BIGINT AS k, (i * 3)::BIGINT AS w FROM range(100000) t(i)',
      );
      const plan = {
        version: 1,
        sources: { f: { parquet: F }, d: { parquet: D } },
        execution: { partitions: 3, broadcastBytes: 0 },
        query: {
          op: 'aggregate',
          groupBy: [],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'sum', column: 'v', as: 'sv' },
            { fn: 'sum', column: 'w', as: 'sw' },
          ],
          input: {
            op: 'join',
            type: 'inner',
            left: { op: 'scan', source: 'f' },
            right: { op: 'scan', source: 'd' },
            on: [['k', 'k']],
          },
        },
      };
      const file = writePlan(dir, plan, 'restart.json');
      const stats = path.join(dir, 'restart-stats.json');
      const child = spawn(
        process.execPath,
        [
          BIN,
          file,
          '--engine',
          'spark',
          '--remote',
          `sc://localhost:${port}/;token=${shared.token}`,
          '--json',
          '--stats',
          stats,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '',
        stderr = '';
      child.stdout.on('data', (b) => {
        stdout += b;
      });
      child.stderr.on('data', (b) => {
        stderr += b;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      // the query's job running on the first server (the run sends no other query: local files, no sampling)
      const t0 = Date.now();
      const running = async () => {
        try {
          const apps = (await (await fetch(`${first.uiUrl}/api/v1/applications`)).json()) as { id: string }[];
          const jobs = await fetch(`${first.uiUrl}/api/v1/applications/${apps[0].id}/jobs?status=running`);
          return ((await jobs.json()) as unknown[]).length > 0;
        } catch {
          return false;
        }
      };
      while (!(await running()) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 100));
      expect(await running(), stderr).toBe(true);
      target = shared.port;
      first.kill();
      expect(await exited, stderr).toBe(0);
      const [want] = await duckRows(`SELECT count(*), sum(v), sum(w) FROM '${F}' f JOIN '${D}' d ON f.k = d.k`);
      expect(JSON.parse(stdout)).toEqual({ n: Number(want[0]), sv: Number(want[1]), sw: Number(want[2]) });
      const s = JSON.parse(fs.readFileSync(stats, 'utf8')).spark;
      expect(s.restarts).toEqual([
        expect.stringMatching(new RegExp(`server at localhost:${port} restarted during the run`)),
      ]);
    } finally {
      first.kill();
      await first.stop();
      await p.close();
    }
  }, 240_000);
});
