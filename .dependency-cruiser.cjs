// The layering rules of src/ (docs/architecture.md), checked in CI by `npm run lint`.
// Lower layers (kernels, expr, io, plan, shuffle, agg, skew, spill) never load the engine (physical, scheduler,
// runtime) nor the front ends; operators (physical/) never load the scheduler or the runtime; the workers never load
// coordinator code; nothing loads the command line or the benchmark but themselves; no import circle at all; no family of physical/
// loads another, and the shared files of physical/ load none.
const COORDINATOR =
  '^src/(scheduler|cli|bench|spark|sql)/|^src/physical/(operator|explain|shuffle|grace|range-shuffle|fused-ranges)\\.ts$|' +
  '^src/physical/[^/]+/(stage|shuffle|hot-keys|tasks|broadcast|grace|two-level|repeats|marked)\\.ts$';
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circle at all, inside a folder too: move what both files need down into a leaf file.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'families-never-load-another-family',
      severity: 'error',
      comment:
        'An operator family (physical/<family>/) meets the others only through the neutral places: the contracts in ' +
        'physical/*.ts, kernels, shuffle, spill, plan, expr. physical/operators.ts and physical/kernels.ts assemble them.',
      from: { path: '^src/physical/(aggregate|exchange|join|limit|scan|setop|sort|window)/' },
      to: {
        path: '^src/physical/(aggregate|exchange|join|limit|scan|setop|sort|window)/',
        pathNot: '^src/physical/$1/',
      },
    },
    {
      name: 'lower-layers-never-load-the-engine',
      severity: 'error',
      comment: "kernels, expr, io, plan, shuffle, agg, skew and spill are the engine's building blocks: they must not import it.",
      from: { path: '^src/(kernels|expr|io|plan|shuffle|agg|skew|spill)/' },
      to: { path: '^src/(physical|scheduler|runtime|cli|bench|spark|sql)/' },
    },
    {
      name: 'contracts-never-load-a-family',
      severity: 'error',
      comment:
        'The shared files of physical/ (task.ts, operator.ts, pipeline.ts, shuffle.ts, ...) name no family: a family ' +
        "registers its types and kernels in physical/kernels.ts and its operator in physical/operators.ts, the two tables.",
      from: { path: '^src/physical/[^/]+\\.ts$', pathNot: '^src/physical/(kernels|operators)\\.ts$' },
      to: { path: '^src/physical/(aggregate|exchange|join|limit|scan|setop|sort|window)/' },
    },
    {
      name: 'kernels-are-the-ground-floor',
      severity: 'error',
      comment: 'kernels/ (columns, keys, hash tables, sorts) load no layer above them: expressions, io, agg, shuffle.',
      from: { path: '^src/kernels/' },
      to: { path: '^src/(expr|io|agg|skew|spill|shuffle)/' },
    },
    {
      name: 'operators-never-load-the-scheduler-or-runtime',
      severity: 'error',
      comment: 'An operator reaches the running query through ExecContext (physical/operator.ts), never the executor or the pool.',
      from: { path: '^src/physical/' },
      to: { path: '^src/(scheduler|runtime|cli|bench|spark|sql)/' },
    },
    {
      name: 'workers-never-load-coordinator-code',
      severity: 'error',
      comment: 'A worker thread loads the task kernels only: no operator stage, no scheduler.',
      from: { path: '^src/runtime/worker\\.ts$' },
      to: { path: COORDINATOR, reachable: true },
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
      from: { orphan: true, path: '^src/', pathNot: '^src/(index|cli/main|runtime/worker|plan/emit-schema)\\.ts$' },
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
