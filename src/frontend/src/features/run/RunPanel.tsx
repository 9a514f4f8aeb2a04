// A run as it happens: counters, the step timeline with child lanes, the Markdown answer, artifacts, feedback.
import { useMutation } from "@tanstack/react-query";
import { Markdown } from "../../components/Markdown";
import { ErrorView } from "../../components/States";
import { api, call } from "../../lib/api/client";
import { ApiError } from "../../lib/api/errors";
import type { RunView } from "../../lib/events/useRun";
import { Artifacts } from "./Artifacts";
import { Feedback } from "./Feedback";
import { StepList } from "./StepItem";
import { UsageCounter } from "./UsageCounter";

const PHASE_LABEL = { idle: "idle", running: "running", succeeded: "done", failed: "failed", cancelled: "cancelled", interrupted: "interrupted" } as const;

export function RunPanel({ view, showSteps = true }: { view: RunView; showSteps?: boolean }) {
  const { timeline, connection, error } = view;
  const runId = timeline.runId;
  const cancel = useMutation({
    mutationFn: (id: string) => call(api.PUT("/api/v1/runs/{run_id}/cancellation", { params: { path: { run_id: id } } })),
  });
  const running = timeline.phase === "running";
  const badge = timeline.phase === "succeeded" ? "ok" : timeline.phase === "running" ? "" : "err";
  return (
    <section className="stack" aria-label="Run" data-testid="run-panel" data-phase={timeline.phase}>
      <div className="row">
        <span className={`badge ${badge}`} data-testid="run-phase">{PHASE_LABEL[timeline.phase]}</span>
        {running && timeline.status && <span className="muted" role="status">{timeline.status}</span>}
        {connection === "reconnecting" && <span className="badge warn" role="status">reconnecting…</span>}
        <span className="grow" />
        {running && runId && (
          <button className="danger" onClick={() => cancel.mutate(runId)} disabled={cancel.isPending || cancel.isSuccess}>
            {cancel.isSuccess ? "Cancelling…" : "Cancel run"}
          </button>
        )}
      </div>
      <UsageCounter timeline={timeline} />
      {error && connection === "failed" && <ErrorView error={error} />}
      {cancel.error && <ErrorView error={cancel.error} />}
      {showSteps && (
        <details open={running}>
          <summary>Steps ({timeline.lastSeq} events)</summary>
          <StepList items={timeline.root} lanes={timeline.children} />
        </details>
      )}
      {timeline.failure && <ErrorView error={new ApiError(0, timeline.failure.code, timeline.failure.message, timeline.failure.action ?? undefined)} />}
      {timeline.answer !== null && (
        <div className="answer" aria-label="Answer" data-testid="answer">
          <Markdown text={timeline.answer} />
        </div>
      )}
      {timeline.summary && <p className="muted">Summary: {timeline.summary}</p>}
      <Artifacts items={timeline.artifacts} />
      {runId && !running && timeline.answer !== null && <Feedback runId={runId} />}
    </section>
  );
}
