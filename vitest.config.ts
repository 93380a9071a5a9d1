import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    // one local Spark Connect server for test/spark*.test.ts, started only when they are in the run
    globalSetup: ['test/spark-setup.ts'],
  },
});
