// The honest status of a run: succeeded, partial (a budget or the time limit stopped it, named), failed,
// cancelled or interrupted. A server-side `outcome` wins when the run record has one; until then it is
// derived from the events (a root-level budget_exhausted, or the final answer's `partial` field).
import type { FleetEvent } from "../../lib/api/events.gen";
import type { Timeline } from "../../lib/events/types";

export type Outcome = "running" | "idle" | "succeeded" | "partial" | "failed" | "cancelled" | "interrupted";

export interface OutcomeInfo {
  outcome: Outcome;
  /** Why a partial run stopped, e.g. "max_iters (20 of 20)". */
  reason: string | null;
}

export const OUTCOME_LABEL: Record<Outcome, string> = {
  idle: "idle", running: "running", succeeded: "succeeded", partial: "partial", failed: "failed", cancelled: "cancelled", interrupted: "interrupted",
};
export const OUTCOME_BADGE: Record<Outcome, string> = {
  idle: "", running: "", succeeded: "ok", partial: "warn", failed: "err", cancelled: "warn", interrupted: "err",
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

export function runOutcome(timeline: Timeline, events: FleetEvent[], serverOutcome?: string | null): OutcomeInfo {
  const budget = events.find((e): e is Extract<FleetEvent, { type: "budget_exhausted" }> => e.type === "budget_exhausted" && e.depth === 0);
  const reason = budget ? budgetText(budget.budget, budget.used, budget.limit) : null;
  if (serverOutcome && serverOutcome in OUTCOME_LABEL) return { outcome: serverOutcome as Outcome, reason };
  if (timeline.phase !== "succeeded") return { outcome: timeline.phase, reason: null };
  const final = events.find((e): e is Extract<FleetEvent, { type: "final" }> => e.type === "final");
  if (budget || final?.fields?.partial === true) return { outcome: "partial", reason: reason ?? "stopped by a budget" };
  return { outcome: "succeeded", reason: null };
}
