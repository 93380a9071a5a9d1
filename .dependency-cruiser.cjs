// The layering rules of src/ (docs/architecture.md), checked in CI by `npm run lint:deps`.
// Lower layers (kernels, expr, io, plan, shuffle) never load the engine (exec, cli, bench); nothing loads the command
// line or the benchmark but themselves; no import circles.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular-across-folders',
      severity: 'error',
      comment: 'An import circle through two folders ties them together: break it with an interface (exec/context.ts).',
      from: { path: '^src/([^/]+)/' },
      to: { circular: true, viaSomeNot: '^src/$1/' },
    },
    {
      name: 'lower-layers-never-load-the-engine',
      severity: 'error',
      comment: 'kernels, expr, io, plan and shuffle are the engine\'s building blocks: they must not import it.',
      from: { path: '^src/(kernels|expr|io|plan|shuffle)/' },
      // the pure policy modules (decisions from statistics and settings, a sketch) are building blocks too
      to: { path: '^src/(exec|cli|bench|agg|joins|skew|sort|spill)/', pathNot: '^src/(skew|joins)/decide\\.ts$|^src/skew/sketch\\.ts$' },
    },
    {
      name: 'only-the-front-ends-load-cli-and-bench',
      severity: 'error',
      comment: 'The command line and the benchmark sit on top: no engine code imports them.',
      from: { path: '^src/', pathNot: '^src/(cli|bench)/|^src/index\\.ts$|^src/[^/]+/cli\\.ts$' },
      to: { path: '^src/(cli|bench)/' },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A file nothing imports is dead code (entry points excepted).',
      from: { orphan: true, path: '^src/', pathNot: '^src/(index|cli/main|exec/worker|plan/emit-schema)\\.ts$' },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
