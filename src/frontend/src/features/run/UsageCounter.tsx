// Live tokens, cost, LM calls and elapsed time of a run (elapsed ticks while it runs). Shown the same way in
// every state: a failed run's cost is what it spent, an unpriced model says so.
import type { Timeline } from "../../lib/events/types";
import { cost, plural } from "./format";
import { useNow } from "./useNow";

export function elapsedMs(t: Timeline, now: number): number {
  if (!t.startedAt) return 0;
  const end = t.endedAt ? Date.parse(t.endedAt) : now;
  return Math.max(0, end - Date.parse(t.startedAt));
}

export function UsageCounter({ timeline }: { timeline: Timeline }) {
  const now = useNow(timeline.phase === "running");
  const u = timeline.usage;
  const tokens = (u?.tokens_in ?? 0) + (u?.tokens_out ?? 0);
  return (
    <div className="counter" aria-label="Run usage" data-testid="usage">
      <span>Tokens <b>{tokens.toLocaleString()}</b></span>
      <span>Cost <b data-testid="cost">{cost(u?.cost_usd ?? 0, u?.cost_known ?? true)}</b></span>
      <span>LM calls <b data-testid="lm-calls">{u?.lm_calls ?? 0}</b></span>
      {!!u?.iterations && <span><b>{plural(u.iterations, "REPL step")}</b></span>}
      <span>Elapsed <b>{(elapsedMs(timeline, now) / 1000).toFixed(1)} s</b></span>
    </div>
  );
}
