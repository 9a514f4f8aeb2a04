// Sticky above the conversation while a run is active: what it is doing, elapsed time and Stop (also Esc),
// so stopping never needs scrolling back to the run.
import { useEffect } from "react";
import type { RunView } from "../../lib/events/useRun";
import { elapsedMs } from "./UsageCounter";
import { useNow } from "./useNow";
import { useStop } from "./useStop";

export function RunBar({ view }: { view: RunView }) {
  const { timeline } = view;
  const stop = useStop(timeline.runId);
  const running = timeline.phase === "running";
  const now = useNow(running);
  useEffect(() => {
    if (!running) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !e.defaultPrevented) stop.stop();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [running, stop]);
  if (!running || !timeline.runId) return null;
  return (
    <div className="flex items-center gap-3 border-b border-line bg-panel-2 px-4 py-1.5 text-[13px]" role="region" aria-label="Active run" data-testid="run-bar">
      <span className="inline-block h-2 w-2 shrink-0 animate-pulse rounded-full bg-accent" aria-hidden="true" />
      <span className="min-w-0 truncate" role="status">{timeline.status ?? "running"}</span>
      <span className="shrink-0 tabular-nums text-muted">{(elapsedMs(timeline, now) / 1000).toFixed(1)} s</span>
      <span className="grow" />
      <button className="danger shrink-0" onClick={stop.stop} disabled={stop.pending} aria-label={stop.pending ? "Stopping the run" : "Stop run"} aria-keyshortcuts="Escape" title="Stop the run (Esc)">
        <span aria-hidden="true">{stop.pending ? "" : "■ "}</span>{stop.pending ? "Stopping…" : "Stop"} <span className="muted text-[11px]" aria-hidden="true">Esc</span>
      </button>
    </div>
  );
}
