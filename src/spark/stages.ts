// Per-stage task times of a Spark run from the driver's REST API
// (/api/v1/applications/<id>/stages and each stage's taskSummary): the figures
// that show a skewed stage, its slowest task against its median one.

export interface StageTimes {
  id: number;
  tasks: number;
  slowestMs: number;
  medianMs: number;
  /** the tasks' CPU time (executorCpuTime): the slowest and the median task's */
  slowestCpuMs?: number;
  medianCpuMs?: number;
  /** rows a task read from the shuffle: the most and the median (a skewed partition's task reads the most) */
  mostRows?: number;
  medianRows?: number;
  /** the stage from its submission to its completion; its tasks' time and CPU time together */
  wallMs?: number;
  taskMs?: number;
  cpuMs?: number;
  /** rows the stage read from the shuffle (a join's stage reads both sides) */
  shuffleRows?: number;
  /** every successful task's run time (executorRunTime), when asked for (`withTasks`: the bench's simulation) */
  durations?: number[];
}

/** Longest wait for one REST answer: the figures are a bonus, never a reason to hang. */
const REST_MS = 10_000;

async function getJson(url: string): Promise<unknown> {
  const r = await fetch(url, { signal: AbortSignal.timeout(REST_MS) });
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.json();
}

/**
 * The stages `ids` (as ExecutePlan's progress named them) of application `appId`, from
 * the REST API at `uiUrl`; empty when there is no URL or it does not answer.
 */
export async function stageTimes(
  uiUrl: string | undefined,
  appId: string,
  ids: number[],
  withTasks = false,
): Promise<StageTimes[]> {
  if (process.env.SKEWJOIN_DEBUG) process.stderr.write(`spark stages: ${uiUrl} ${appId} ${ids.join(',')}\n`);
  if (!uiUrl || !appId || ids.length === 0) return [];
  const base = `${uiUrl}/api/v1/applications/${encodeURIComponent(appId)}/stages`;
  try {
    const all = (await getJson(base)) as {
      stageId: number;
      attemptId: number;
      numTasks: number;
      status: string;
      submissionTime?: string;
      completionTime?: string;
      executorCpuTime?: number;
      executorRunTime?: number;
      shuffleReadRecords?: number;
    }[];
    const wanted = new Set(ids);
    const out: StageTimes[] = [];
    // a stage AQE skipped (its shuffle already written) ran no task: it has no summary
    for (const s of all
      .filter((x) => wanted.has(x.stageId) && x.status !== 'SKIPPED')
      .sort((a, b) => a.stageId - b.stageId)) {
      const q = (await getJson(`${base}/${s.stageId}/${s.attemptId}/taskSummary?quantiles=0.5,1.0`).catch(
        () => ({}),
      )) as { duration?: number[]; executorCpuTime?: number[]; shuffleReadMetrics?: { readRecords?: number[] } };
      if (!q.duration) continue;
      const [median, slowest] = q.duration ?? [0, 0];
      const cpu = q.executorCpuTime ?? [0, 0];
      const rows = q.shuffleReadMetrics?.readRecords ?? [0, 0];
      // the REST API's times: "2024-05-01T10:00:00.123GMT"
      const at = (t?: string) => (t ? Date.parse(t.replace(/GMT$/, 'Z')) : Number.NaN);
      const wall = at(s.completionTime) - at(s.submissionTime);
      const durations = withTasks ? await taskDurations(`${base}/${s.stageId}/${s.attemptId}`, s.numTasks) : undefined;
      out.push({
        id: s.stageId,
        tasks: s.numTasks,
        slowestMs: slowest,
        medianMs: median,
        slowestCpuMs: Math.round(cpu[1] / 1e6),
        medianCpuMs: Math.round(cpu[0] / 1e6),
        mostRows: rows[1],
        medianRows: rows[0],
        ...(Number.isFinite(wall) ? { wallMs: wall } : {}),
        taskMs: s.executorRunTime ?? 0,
        cpuMs: Math.round((s.executorCpuTime ?? 0) / 1e6),
        shuffleRows: s.shuffleReadRecords ?? 0,
        ...(durations ? { durations } : {}),
      });
    }
    return out;
  } catch (e) {
    if (process.env.SKEWJOIN_DEBUG) process.stderr.write(`spark stages: ${(e as Error).message}\n`);
    return [];
  }
}

/** A stage attempt's successful tasks' run times (taskList, executorRunTime in ms). */
async function taskDurations(stageUrl: string, tasks: number): Promise<number[]> {
  const list = (await getJson(`${stageUrl}/taskList?length=${Math.max(1, tasks)}&status=SUCCESS`).catch(() => [])) as {
    taskMetrics?: { executorRunTime?: number };
    duration?: number;
  }[];
  return list.map((t) => t.taskMetrics?.executorRunTime ?? t.duration ?? 0);
}
