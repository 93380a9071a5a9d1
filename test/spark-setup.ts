// One local Spark Connect server for all Spark tests (test/spark*.test.ts), started
// once per vitest run and only when such a file is in the run: local[2], 1 GB of
// driver memory, few shuffle partitions. Without Java 17+ or pyspark the tests skip
// saying what to install; under CI=true they are required (the tests fail instead).
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    sparkRemote: string;
    sparkUi: string;
    sparkMissing: string;
  }
}

/** Whether the run's file filters (positional arguments after `run`) leave any Spark test in. */
function sparkTestsInRun(): boolean {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('-') && a !== 'run' && !a.includes('vitest'));
  const filters = args.filter((a) => /test|\.ts$/.test(a) || !a.includes('='));
  return filters.length === 0 || filters.some((a) => /spark/i.test(path.basename(a)));
}

export default async function setup(project: TestProject) {
  project.provide('sparkRemote', '');
  project.provide('sparkUi', '');
  project.provide('sparkMissing', 'no Spark test in this run');
  if (!sparkTestsInRun()) return;
  const { LocalSparkServer, sparkMissing } = await import('../dist/spark/server.js');
  const missing = sparkMissing();
  if (missing) {
    project.provide('sparkMissing', missing);
    return;
  }
  const server = await LocalSparkServer.start(2, {
    'spark.driver.memory': '1g',
    'spark.sql.shuffle.partitions': '4',
    'spark.ui.retainedStages': '5000',
  });
  project.provide('sparkRemote', server.url);
  project.provide('sparkUi', server.uiUrl);
  project.provide('sparkMissing', '');
  return async () => {
    await server.stop();
  };
}
