// Live tokens, cost, LM calls and elapsed time of a run (elapsed ticks while it runs).
import { useEffect, useState } from "react";
import type { Timeline } from "../../lib/events/types";

export function elapsedMs(t: Timeline, now: number): number {
  if (!t.startedAt) return 0;
  const end = t.endedAt ? Date.parse(t.endedAt) : now;
  return Math.max(0, end - Date.parse(t.startedAt));
}

export function UsageCounter({ timeline }: { timeline: Timeline }) {
  const [now, setNow] = useState(() => Date.now());
  const live = timeline.phase === "running";
  useEffect(() => {
    if (!live) return;
    const id = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(id);
  }, [live]);
  const u = timeline.usage;
  const tokens = (u?.tokens_in ?? 0) + (u?.tokens_out ?? 0);
  return (
    <div className="counter" aria-label="Run usage" data-testid="usage">
      <span>Tokens <b>{tokens.toLocaleString()}</b></span>
      <span>Cost <b>${(u?.cost_usd ?? 0).toFixed(4)}</b>{u && !u.cost_known && " (partly unpriced)"}</span>
      <span>LM calls <b data-testid="lm-calls">{u?.lm_calls ?? 0}</b></span>
      <span>Elapsed <b>{(elapsedMs(timeline, now) / 1000).toFixed(1)} s</b></span>
    </div>
  );
}
