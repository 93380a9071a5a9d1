// A local Spark Connect server started from the installed pyspark (the project's
// .venv by `npm run spark:install`, or SPARK_HOME): local[N], bound to 127.0.0.1 with
// a random token, its scratch folders in one temporary folder removed when it stops.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExecutionError } from '../errors.js';
import { registerCleanup } from '../io/cleanup.js';

/** The pyspark that `npm run spark:install` installs (scripts/spark-install.sh); it runs on Java 17. */
const PINNED_PYSPARK = '4.1.4';
const INSTALL_HINT =
  'install Java 17 or newer and the pinned pyspark with `npm run spark:install` ' +
  `(pyspark ${PINNED_PYSPARK} into .venv/), or set SPARK_HOME, or give --remote sc://host:port`;
/** How long a local server may take to start (the JVM and Spark's context: ~20 s on 2 loaded cores). */
const START_MS = 180_000;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The Spark home of the installed pyspark, or null. */
function findSparkHome(): string | null {
  const env = process.env.SPARK_HOME;
  if (env && fs.existsSync(path.join(env, 'bin', 'spark-submit'))) return env;
  const lib = path.join(ROOT, '.venv', 'lib');
  if (!fs.existsSync(lib)) return null;
  for (const py of fs.readdirSync(lib)) {
    const home = path.join(lib, py, 'site-packages', 'pyspark');
    if (fs.existsSync(path.join(home, 'bin', 'spark-submit'))) return home;
  }
  return null;
}

/** The major version of the `java` Spark will run (JAVA_HOME's, else the PATH's), or 0. */
function javaVersion(): number {
  const java = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  // `java -version` writes to stderr
  const r = spawnSync(java, ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return versionOf(`${r.stdout ?? ''}${r.stderr ?? ''}`);
}
function versionOf(text: string): number {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(text);
  if (!m) return 0;
  return m[1] === '1' ? Number(m[2]) : Number(m[1]);
}

/** What is missing for a local server, or null when it can start. */
export function sparkMissing(): string | null {
  const v = javaVersion();
  if (v < 17) return `${v ? `Java ${v} is too old` : 'no java found'}: ${INSTALL_HINT}`;
  if (!findSparkHome()) return `no pyspark found: ${INSTALL_HINT}`;
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

export class LocalSparkServer {
  private exited = false;
  private readonly unregister: () => void;

  private constructor(
    readonly url: string,
    readonly uiUrl: string,
    readonly workers: number,
    private readonly child: ChildProcess,
    readonly dir: string,
  ) {
    child.once('exit', () => {
      this.exited = true;
    });
    // on exit or a signal: the JVM and its scratch folder do not outlive us
    this.unregister = registerCleanup(() => {
      if (!this.exited)
        try {
          child.kill('SIGKILL');
        } catch {
          /* already gone */
        }
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }

  /** `token`: the server's (a random one by default; a test's second server takes the first one's). */
  static async start(
    workers: number,
    extraConf: Record<string, string> = {},
    token = randomBytes(24).toString('hex'),
  ): Promise<LocalSparkServer> {
    const missing = sparkMissing();
    if (missing) throw new ExecutionError(`--engine spark without a remote needs a local Spark: ${missing}`);
    const home = findSparkHome()!;
    const [port, uiPort] = [await freePort(), await freePort()];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skewjoin-spark-'));
    const conf: Record<string, string> = {
      'spark.connect.grpc.binding.address': '127.0.0.1',
      'spark.connect.grpc.binding.port': String(port),
      'spark.ui.port': String(uiPort),
      'spark.driver.host': '127.0.0.1',
      'spark.driver.bindAddress': '127.0.0.1',
      'spark.local.dir': path.join(dir, 'local'),
      'spark.sql.warehouse.dir': path.join(dir, 'warehouse'),
      'spark.ui.showConsoleProgress': 'false',
      ...extraConf,
    };
    const args = [
      '--class',
      'org.apache.spark.sql.connect.service.SparkConnectServer',
      '--master',
      `local[${workers}]`,
      '--driver-memory',
      extraConf['spark.driver.memory'] ?? '1g',
      ...Object.entries(conf).flatMap(([k, v]) => ['--conf', `${k}=${v}`]),
    ];
    const log = fs.openSync(path.join(dir, 'server.log'), 'w');
    const child = spawn(path.join(home, 'bin', 'spark-submit'), args, {
      cwd: dir,
      detached: true,
      stdio: ['ignore', log, log],
      // the token by environment, not on the command line where `ps` shows it
      env: { ...process.env, SPARK_HOME: home, SPARK_LOCAL_IP: '127.0.0.1', SPARK_CONNECT_AUTHENTICATE_TOKEN: token },
    });
    fs.closeSync(log);
    const server = new LocalSparkServer(
      `sc://localhost:${port}/;token=${token}`,
      `http://127.0.0.1:${uiPort}`,
      workers,
      child,
      dir,
    );
    await server.waitListening(port);
    return server;
  }

  /** Wait for the gRPC port to accept connections; a server that exits first fails with its log's last lines. */
  private async waitListening(port: number): Promise<void> {
    const t0 = Date.now();
    while (Date.now() - t0 < START_MS) {
      if (this.exited) break;
      if (fs.readFileSync(path.join(this.dir, 'server.log'), 'utf8').includes('Spark Connect server started')) {
        if (await connects(port)) return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    const tail = this.logTail();
    await this.stop();
    throw new ExecutionError(
      `the local Spark Connect server did not start${this.exited ? '' : ` within ${START_MS / 1000} s`}:\n${tail}`,
    );
  }

  logTail(lines = 15): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'server.log'), 'utf8').trim().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Kill the JVM at once (SIGKILL to its process group), as a crash would; stop() then removes its folder. */
  kill(): void {
    if (this.exited || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      this.child.kill('SIGKILL');
    }
  }

  /** Stop the JVM (SIGTERM, then SIGKILL after 10 s) and remove its scratch folder. */
  async stop(): Promise<void> {
    if (!this.exited) {
      const gone = new Promise<void>((r) => this.child.once('exit', () => r()));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => {
        try {
          this.child.kill('SIGKILL');
        } catch {
          /* gone */
        }
      }, 10_000);
      await gone;
      clearTimeout(timer);
    }
    this.unregister();
  }
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
