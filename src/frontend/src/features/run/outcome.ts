// The honest status of a run: queued (waiting for a worker), running, succeeded, partial (a budget or the time limit stopped it, named), failed,
// cancelled or interrupted. The server says complete|partial (turn_finished.outcome / the run's outcome, with
// stop_reason); older runs without it are read from the events (a root-level budget_exhausted).
import type { FleetEvent } from "../../lib/api/events.gen";
import type { Timeline } from "../../lib/events/types";

export type Outcome = "pending" | "queued" | "running" | "idle" | "succeeded" | "partial" | "failed" | "cancelled" | "interrupted";

export interface OutcomeInfo {
  outcome: Outcome;
  /** Why a partial run stopped, e.g. "max_iters (20 of 20)". */
  reason: string | null;
}

export const OUTCOME_LABEL: Record<Outcome, string> = {
  idle: "idle", pending: "loading…", queued: "queued", running: "running", succeeded: "succeeded", partial: "partial", failed: "failed", cancelled: "cancelled", interrupted: "interrupted",
};
export const OUTCOME_BADGE: Record<Outcome, string> = {
  idle: "", pending: "", queued: "", running: "", succeeded: "ok", partial: "warn", failed: "err", cancelled: "warn", interrupted: "err",
};

const BUDGET_NAME: Record<string, string> = {
  max_iters: "the iteration limit", max_llm_calls: "the LM call limit", turn_timeout_s: "the time limit",
  max_tokens: "the token limit", max_cost_usd: "the cost limit",
};

export function budgetText(budget: string, used: number, limit: number): string {
  const name = BUDGET_NAME[budget] ?? budget;
  const unit = budget === "turn_timeout_s" ? " s" : "";
  return `stopped by ${name} (${budget}: ${used}${unit} of ${limit}${unit})`;
}

export function runOutcome(timeline: Timeline, events: FleetEvent[], serverOutcome?: string | null, serverReason?: string | null): OutcomeInfo {
  if (timeline.phase === "running" && events.some((e) => e.type === "turn_queued") && !events.some((e) => e.type === "turn_started")) {
    return { outcome: "queued", reason: null }; // waits in the job queue for a worker (queue execution)
  }
  if (timeline.phase !== "succeeded") return { outcome: timeline.phase, reason: null };
  const budget = events.find((e): e is Extract<FleetEvent, { type: "budget_exhausted" }> => e.type === "budget_exhausted" && e.depth === 0);
  const finished = events.find((e): e is Extract<FleetEvent, { type: "turn_finished" }> => e.type === "turn_finished");
  const outcome = finished?.outcome ?? serverOutcome ?? null;
  const stopReason = finished?.stop_reason ?? serverReason ?? budget?.budget ?? null;
  const partial = outcome ? outcome === "partial" : !!budget;
  if (!partial) return { outcome: "succeeded", reason: null };
  const reason = budget ? budgetText(budget.budget, budget.used, budget.limit) : stopReason ? `stopped by ${BUDGET_NAME[stopReason] ?? stopReason}` : "stopped by a budget";
  return { outcome: "partial", reason };
}
