// Plans the SQL compiler made inside this process, for a run it starts itself (the command line's SQL, runSql):
// plan/load.ts takes them without the schema's check, which is for plans written by hand. A plan compileSql
// hands to its caller is not marked: the caller may change it before running it.
const compiled = new WeakSet<object>();

/** Mark a plan the compiler has just made for a run of its own. */
export function markCompiled<T extends object>(plan: T): T {
  compiled.add(plan);
  return plan;
}

export const isCompiled = (plan: unknown): boolean => typeof plan === 'object' && plan !== null && compiled.has(plan);
