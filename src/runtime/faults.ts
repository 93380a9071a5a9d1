// Fault injection for tests (as DuckDB and Spark keep test-only knobs): the
// environment variable SKEWJOIN_FAULTS, a comma-separated list of rules
// `crash:<stage>:<kind>:<n>:<once|always>`. The worker running the n-th task
// (0-based, in launch order) of that kind in that stage dies as a worker
// calling process.exit(1) would, on its first attempt only or on every one.
// Set, every task runs on the worker pool; unset, nothing here costs anything.
import { PlanError } from '../errors.js';

const FAULTS_ENV = 'SKEWJOIN_FAULTS';

export interface CrashRule {
  stage: string;
  kind: string;
  n: number;
  mode: 'once' | 'always';
}

const RULE = /^crash:([^:]+):([^:]+):(\d+):(once|always)$/;

/** The rules of a SKEWJOIN_FAULTS value; a malformed one is a PlanError (exit 2) naming the rule. */
export function parseFaults(text: string): CrashRule[] {
  return text
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '')
    .map((r) => {
      const m = RULE.exec(r);
      if (!m) {
        throw new PlanError(
          FAULTS_ENV,
          `"${r}" is not a rule of the form crash:<stage>:<kind>:<n>:<once|always> (e.g. crash:join-1:reduce:0:once)`,
        );
      }
      return { stage: m[1], kind: m[2], n: Number(m[3]), mode: m[4] as CrashRule['mode'] };
    });
}

let parsed: { text: string; rules: CrashRule[] } | null = null;

/** The rules in force (read from the environment each time, parsed once per value); empty when unset. */
function faultRules(): CrashRule[] {
  const text = process.env[FAULTS_ENV] ?? '';
  if (text === '') return [];
  if (parsed?.text !== text) parsed = { text, rules: parseFaults(text) };
  return parsed.rules;
}

/** Whether the attempt (from 1) of a task must crash. */
export type CrashDecision = (attempt: number) => boolean;

/** One query's view of the rules: counts the tasks launched per stage and kind. */
export class FaultPlan {
  private readonly launched = new Map<string, number>();
  constructor(private readonly rules: CrashRule[]) {}

  /** The plan for this query, or null when fault injection is off. */
  static current(): FaultPlan | null {
    const rules = faultRules();
    return rules.length > 0 ? new FaultPlan(rules) : null;
  }

  /** Record the launch of a task; undefined when no rule matches it. */
  launch(stage: string, kind: string): CrashDecision | undefined {
    const key = `${stage}\0${kind}`;
    const n = this.launched.get(key) ?? 0;
    this.launched.set(key, n + 1);
    const rule = this.rules.find((r) => r.stage === stage && r.kind === kind && r.n === n);
    if (!rule) return undefined;
    return rule.mode === 'always' ? () => true : (attempt) => attempt === 1;
  }
}
