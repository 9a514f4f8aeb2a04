// One run: live progress while it runs (polled every second), then its scores, per-example results, the
// instruction changes and the Markdown report; cancel while active, promote once it saved a version.
import { CodeBlock } from "../../components/Lazy";
import { Markdown } from "../../components/Lazy";
import { ErrorView, Loading } from "../../components/States";
import { ApiError } from "../../lib/api/errors";
import { PromoteButton } from "./PromoteButton";
import { RunProgress, RunStatusBadge } from "./RunProgress";
import { RunResultsTable } from "./RunResultsTable";
import { budgetText } from "./RunHistory";
import { fmtDelta, fmtScore, isActive, useOptimizationMutations, useRun, useRunResults, useVersions } from "./queries";

const runError = (e: Record<string, unknown>) =>
  new ApiError(0, String(e.code ?? "optimization_failed"), String(e.message ?? "the run failed"), e.action ? String(e.action) : undefined);

function Instructions({ before, after }: { before: Record<string, string>; after: Record<string, string> }) {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  if (names.length === 0) return null;
  return (
    <details>
      <summary>Instructions before / after ({names.length} predictor{names.length === 1 ? "" : "s"})</summary>
      {names.map((name) => (
        <div key={name} className="grid grid-cols-[repeat(auto-fit,minmax(min(340px,100%),1fr))] items-start gap-3">
          <div><div className="step-label">{name} — baseline</div><CodeBlock code={before[name] ?? ""} language="text" /></div>
          <div><div className="step-label">{name} — optimized{before[name] === after[name] ? " (unchanged)" : ""}</div><CodeBlock code={after[name] ?? ""} language="text" /></div>
        </div>
      ))}
    </details>
  );
}

export function RunDetail({ runId, onClose }: { runId: string; onClose: () => void }) {
  const run = useRun(runId);
  const r = run.data;
  const finished = !!r && !isActive(r);
  const results = useRunResults(runId, finished);
  const versions = useVersions();
  const { cancel } = useOptimizationMutations();
  const version = versions.data?.find((v) => v.version === r?.program_version && v.module === r?.module);
  const delta = typeof r?.scores.optimized === "number" && typeof r?.scores.baseline === "number" ? r.scores.optimized - r.scores.baseline : null;

  return (
    <section className="panel stack" aria-label="Run detail" data-testid="opt-run-detail" data-status={r?.status ?? "loading"}>
      <div className="row">
        <h2 className="h2 grow">Run <code>{runId}</code></h2>
        {r && <RunStatusBadge status={r.status} />}
        <button type="button" onClick={onClose} aria-label="Close run detail">Close</button>
      </div>
      {run.isPending && <Loading label="Loading run…" />}
      {run.error && <ErrorView error={run.error} retry={() => void run.refetch()} />}
      {r && (
        <>
          <div className="counter">
            <span>Module <b>{r.module}</b></span>
            <span>Dataset <b>{String(r.config.dataset_name ?? r.dataset_id ?? "–")}</b></span>
            <span>Budget <b>{budgetText(r)}</b></span>
            <span>Train/val <b>{String(r.config.train_size ?? "?")}/{String(r.config.val_size ?? "?")}</b></span>
          </div>
          <RunProgress run={r} />
          {r.error && <ErrorView error={runError(r.error)} />}
          {finished && (
            <div className="counter" aria-label="Validation scores">
              <span>Baseline{r.config.baseline_version ? ` (${String(r.config.baseline_version)})` : ""} <b>{fmtScore(r.scores.baseline)}</b></span>
              <span>Optimized <b data-testid="opt-score">{fmtScore(r.scores.optimized)}</b></span>
              <span>Change <b>{fmtDelta(delta)}</b></span>
              <span>Version <b>{r.program_version ?? "none saved"}</b></span>
              {version?.promoted && <span className="badge ok" data-testid="promoted-badge">promoted</span>}
            </div>
          )}
          <div className="row">
            {isActive(r) && (
              <button type="button" className="danger" disabled={!!r.cancel_requested_at || cancel.isPending} onClick={() => cancel.mutate(r.id)}>
                {r.cancel_requested_at ? "Cancelling…" : "Cancel run"}
              </button>
            )}
            {finished && r.program_version && (
              <PromoteButton run={r} promoted={!!version?.promoted} />
            )}
          </div>
          {cancel.error && <ErrorView error={cancel.error} />}
          {finished && results.isPending && <Loading label="Loading results…" />}
          {results.error && <ErrorView error={results.error} />}
          {results.data && (
            <>
              <h3 className="h3">Per-example results (validation)</h3>
              <RunResultsTable results={results.data} />
              <Instructions before={results.data.instructions_before} after={results.data.instructions_after} />
              <details>
                <summary>Markdown report</summary>
                <div data-testid="opt-report"><Markdown text={results.data.report_markdown} /></div>
              </details>
            </>
          )}
        </>
      )}
    </section>
  );
}
