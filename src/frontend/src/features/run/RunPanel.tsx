// A run as it happens: its honest status, counters, the run tree on a time axis with the step detail, the
// Markdown answer, artifacts and feedback. Failed runs offer Retry; Stop is here and in the sticky run bar.
import { Markdown } from "../../components/Lazy";
import { ErrorView } from "../../components/States";
import { ApiError } from "../../lib/api/errors";
import type { RunView } from "../../lib/events/useRun";
import { Artifacts } from "./Artifacts";
import { Feedback } from "./Feedback";
import { OUTCOME_BADGE, OUTCOME_LABEL, runOutcome } from "./outcome";
import { RunInspector } from "./tree/RunInspector";
import { UsageCounter } from "./UsageCounter";
import { useStop } from "./useStop";

export function RunPanel({ view, showSteps = true, onRetry, outcome: serverOutcome, stopReason, traceUrl }: {
  view: RunView;
  showSteps?: boolean;
  onRetry?: () => void;
  /** The run record's outcome (complete | partial) and stop_reason, when known. */
  outcome?: string | null;
  stopReason?: string | null;
  /** Link to this run in the trace backend (FLEET_OTEL_TRACE_URL_TEMPLATE), when configured. */
  traceUrl?: string | null;
}) {
  const { timeline, connection, error } = view;
  const runId = timeline.runId;
  const stop = useStop(runId);
  const running = timeline.phase === "running";
  const { outcome, reason } = runOutcome(timeline, view.events, serverOutcome, stopReason);
  return (
    <section className="stack" aria-label="Run" data-testid="run-panel" data-phase={timeline.phase} data-outcome={outcome}>
      <div className="row">
        <span className={`badge ${OUTCOME_BADGE[outcome]}`} data-testid="run-phase">{OUTCOME_LABEL[outcome]}</span>
        {reason && <span className="warn-text" data-testid="partial-reason">{reason}</span>}
        {running && timeline.status && <span className="muted" role="status">{timeline.status}</span>}
        {connection === "reconnecting" && <span className="badge warn" role="status">reconnecting…</span>}
        <span className="grow" />
        {traceUrl && /^https?:\/\//.test(traceUrl) && <a href={traceUrl} target="_blank" rel="noreferrer noopener">View trace ↗</a>}
        {running && runId && (
          <button className="danger" onClick={stop.stop} disabled={stop.pending}>
            {stop.pending ? "Stopping…" : "Stop"}
          </button>
        )}
        {onRetry && !running && (outcome === "failed" || outcome === "interrupted" || outcome === "cancelled" || outcome === "partial") && (
          <button onClick={onRetry}>Retry</button>
        )}
      </div>
      <UsageCounter timeline={timeline} />
      {error && connection === "failed" && <ErrorView error={error} />}
      {stop.error !== null && <ErrorView error={stop.error} />}
      {showSteps && runId && (
        <details open>
          <summary>Steps ({timeline.lastSeq} events)</summary>
          <RunInspector runId={runId} events={view.events} />
        </details>
      )}
      {timeline.failure && <ErrorView error={new ApiError(0, timeline.failure.code, timeline.failure.message, timeline.failure.action ?? undefined)} />}
      {timeline.answer !== null && (
        <div className="answer" aria-label="Answer" data-testid="answer">
          <Markdown text={timeline.answer} />
        </div>
      )}
      {timeline.summary && timeline.answer === null && <p className="muted">Summary: {timeline.summary}</p>}
      <Artifacts items={timeline.artifacts} />
      {runId && !running && timeline.answer !== null && <Feedback runId={runId} />}
    </section>
  );
}
