// Live progress of a run: phase, iteration, metric calls (as a bar when the budget is known), best/baseline;
// a finished run shows a full bar and how many metric calls it made.
import { fmtScore, isActive, type OptRun } from "./queries";

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);

export function RunStatusBadge({ status }: { status: string }) {
  const tone = status === "succeeded" ? "ok" : status === "failed" || status === "interrupted" ? "err" : status === "cancelled" ? "warn" : "";
  return <span className={`badge ${tone}`} data-testid="opt-run-status">{status}</span>;
}

export function RunProgress({ run }: { run: OptRun }) {
  const p = run.progress;
  const calls = num(p.metric_calls) ?? 0;
  const max = num(p.max_metric_calls);
  const evaluated = num(p.evaluated);
  const total = num(p.total);
  const finished = !isActive(run);
  const share = finished ? 1 : max ? Math.min(1, calls / max) : total ? Math.min(1, (evaluated ?? 0) / total) : null;
  return (
    <div className="stack" aria-label="Run progress">
      <div className="counter" role={isActive(run) ? "status" : undefined} aria-live="polite">
        <span>Phase <b>{String(p.phase ?? run.status)}</b></span>
        <span>Iteration <b>{num(p.iteration) ?? 0}</b></span>
        {finished
          ? <span data-testid="opt-finished">{run.status === "succeeded" ? "Finished" : `Ended (${run.status})`} after <b>{calls}</b> metric call{calls === 1 ? "" : "s"}{max && max !== calls ? ` (budget ${max})` : ""}</span>
          : <span>Metric calls <b>{calls}{max ? ` / ${max}` : ""}</b></span>}
        {total && !finished ? <span>Evaluated <b>{evaluated ?? 0} / {total}</b></span> : null}
        <span>Baseline <b>{fmtScore(p.baseline_score)}</b></span>
        <span>Best <b>{fmtScore(p.best_score)}</b></span>
      </div>
      {share !== null && (
        <div className="progress" role="progressbar" aria-label={finished ? "Run finished" : "Metric calls used"} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(share * 100)}>
          <div style={{ width: `${share * 100}%` }} />
        </div>
      )}
    </div>
  );
}
