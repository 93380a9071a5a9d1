// Per-stage task times of a Spark run from the driver's REST API
// (/api/v1/applications/<id>/stages and each stage's taskSummary): the figures
// that show a skewed stage, its slowest task against its median one.

export interface StageTimes {
  id: number;
  tasks: number;
  slowestMs: number;
  medianMs: number;
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
export async function stageTimes(uiUrl: string | undefined, appId: string, ids: number[]): Promise<StageTimes[]> {
  if (process.env.SKEWJOIN_DEBUG) process.stderr.write(`spark stages: ${uiUrl} ${appId} ${ids.join(',')}\n`);
  if (!uiUrl || !appId || ids.length === 0) return [];
  const base = `${uiUrl}/api/v1/applications/${encodeURIComponent(appId)}/stages`;
  try {
    const all = (await getJson(base)) as { stageId: number; attemptId: number; numTasks: number; status: string }[];
    const wanted = new Set(ids);
    const out: StageTimes[] = [];
    // a stage AQE skipped (its shuffle already written) ran no task: it has no summary
    for (const s of all
      .filter((x) => wanted.has(x.stageId) && x.status !== 'SKIPPED')
      .sort((a, b) => a.stageId - b.stageId)) {
      const q = (await getJson(`${base}/${s.stageId}/${s.attemptId}/taskSummary?quantiles=0.5,1.0`).catch(
        () => ({}),
      )) as { duration?: number[] };
      if (!q.duration) continue;
      const [median, slowest] = q.duration ?? [0, 0];
      out.push({ id: s.stageId, tasks: s.numTasks, slowestMs: slowest, medianMs: median });
    }
    return out;
  } catch (e) {
    if (process.env.SKEWJOIN_DEBUG) process.stderr.write(`spark stages: ${(e as Error).message}\n`);
    return [];
  }
}
