// Your runs, newest first: open one, cancel an active one, or tick two to compare them side by side.
import { useState } from "react";
import { Empty, ErrorView, Loading } from "../../components/States";
import { RunStatusBadge } from "./RunProgress";
import { fmtScore, isActive, useOptimizationMutations, useRefreshOnRunEnd, useRuns, type OptRun } from "./queries";

export function budgetText(run: OptRun): string {
  const budget = run.config.budget ?? run.config.auto ?? run.config.max_metric_calls;
  if (budget && typeof budget === "object") {
    const b = budget as Record<string, unknown>;
    if (b.auto) return `auto ${String(b.auto)}`;
    if (b.max_metric_calls) return `${String(b.max_metric_calls)} calls`;
  }
  if (typeof run.config.auto === "string") return `auto ${run.config.auto}`;
  if (typeof run.config.max_metric_calls === "number") return `${run.config.max_metric_calls} calls`;
  return budget === undefined || budget === null ? "–" : String(budget);
}

export function RunHistory({ current, onOpen, onCompare }: { current: string | null; onOpen: (id: string) => void; onCompare: (a: string, b: string) => void }) {
  const runs = useRuns();
  useRefreshOnRunEnd(runs.data);
  const { cancel } = useOptimizationMutations();
  const [picked, setPicked] = useState<string[]>([]);
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id].slice(-2)));
  return (
    <section className="panel stack" aria-labelledby="opt-runs">
      <div className="row">
        <h2 id="opt-runs" className="h2 grow">Run history</h2>
        <span className="muted small">{picked.length}/2 selected</span>
        <button type="button" disabled={picked.length !== 2} onClick={() => onCompare(picked[0], picked[1])}>Compare selected</button>
      </div>
      {runs.isPending && <Loading label="Loading runs…" />}
      {runs.error && <ErrorView error={runs.error} retry={() => void runs.refetch()} />}
      {runs.data?.length === 0 && <Empty>No optimization runs yet. Upload a dataset and start one.</Empty>}
      {cancel.error && <ErrorView error={cancel.error} />}
      {runs.data && runs.data.length > 0 && (
        <div className="relative min-w-0 overflow-x-auto">
          <table aria-label="Optimization runs">
            <thead>
              <tr><th><span className="sr-only">Compare</span></th><th>Run</th><th>Module</th><th>Dataset</th><th>Budget</th><th>Status</th><th>Baseline</th><th>Optimized</th><th>Version</th><th>Started</th><th><span className="sr-only">Actions</span></th></tr>
            </thead>
            <tbody>
              {runs.data.map((run) => (
                <tr key={run.id} aria-current={run.id === current ? "true" : undefined} className={run.id === current ? "bg-panel-2" : ""}>
                  <td><input type="checkbox" aria-label={`Select run ${run.id} to compare`} checked={picked.includes(run.id)} onChange={() => toggle(run.id)} /></td>
                  <td><button type="button" className="link" onClick={() => onOpen(run.id)} aria-label={`Open run ${run.id}`}><code>{run.id.slice(0, 10)}</code></button></td>
                  <td><code>{run.module}</code></td>
                  <td>{String(run.config.dataset_name ?? run.dataset_id ?? "–")}</td>
                  <td>{budgetText(run)}</td>
                  <td><RunStatusBadge status={run.status} /></td>
                  <td>{fmtScore(run.scores.baseline)}</td>
                  <td>{fmtScore(run.scores.optimized)}</td>
                  <td>{run.program_version ?? "–"}</td>
                  <td>{new Date(run.created_at).toLocaleString()}</td>
                  <td>{isActive(run) && <button type="button" className="danger" disabled={!!run.cancel_requested_at || cancel.isPending} onClick={() => cancel.mutate(run.id)}>Cancel<span className="sr-only"> run {run.id}</span></button>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
