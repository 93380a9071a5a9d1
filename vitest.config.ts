import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    // plans compiled from SQL are checked against the plan's schema too (a run takes them unchecked otherwise:
    // plan/compiled.ts), in this process and in the command lines the tests start
    env: { SKEWJOIN_CHECK_PLANS: '1' },
    // one local Spark Connect server for test/spark*.test.ts, started only when they are in the run
    globalSetup: ['test/spark-setup.ts'],
  },
});
