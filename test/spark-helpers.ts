// The shared Spark Connect server of test/spark-setup.ts, for the Spark tests.
import { inject, vi } from 'vitest';

/** The server's sc:// URL, '' when there is none. */
export const REMOTE = inject('sparkRemote');
export const SPARK_UI = inject('sparkUi');
/** Why there is no server ('' when there is one). */
const MISSING = inject('sparkMissing');
/** Skip the Spark tests when Spark cannot run here, but not under CI=true (.ci/run installs it): there they fail. */
export const NO_SPARK = !REMOTE && process.env.CI !== 'true';
if (NO_SPARK) console.warn(`Spark tests skipped: ${MISSING}`);
/** Fail (rather than skip) when Spark is required and absent. */
export function requireSpark(): void {
  if (!REMOTE) throw new Error(`the Spark tests need a local Spark: ${MISSING}`);
}
// A Spark query takes seconds, the first of a server tens of seconds (the JVM warms up)
vi.setConfig({ testTimeout: 180_000 });
