// Folds a run's events into a Timeline: dedupes by seq (replays and reconnects may repeat events), groups
// sub-LM calls of one llm_query_batched, and gives each child RLM its own lane. Pure: easy to unit test.
import type { FleetEvent } from "../api/events.gen";
import { TERMINAL_TYPES, type ChildLane, type RunPhase, type SubCall, type Timeline, type TimelineItem } from "./types";

const FINAL_PHASES: ReadonlySet<RunPhase> = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

export function emptyTimeline(runId: string | null = null): Timeline {
  return {
    runId,
    lastSeq: 0,
    phase: runId ? "pending" : "idle",
    root: [],
    children: {},
    usage: null,
    answer: null,
    summary: null,
    artifacts: [],
    status: null,
    input: null,
    turnId: null,
    startedAt: null,
    endedAt: null,
    failure: null,
  };
}

/** The lane an event belongs to: a child's id for its own events, else "root". */
export function laneOf(event: FleetEvent, children: Record<string, ChildLane>): string {
  if (event.actor?.startsWith("child:")) {
    const id = event.actor.slice("child:".length);
    if (children[id]) return id;
  }
  if (event.parent_id && children[event.parent_id] && event.type !== "child_start") return event.parent_id;
  return "root";
}

type Lanes = { root: TimelineItem[]; children: Record<string, ChildLane> };

function itemsOf(lanes: Lanes, lane: string): TimelineItem[] {
  return lane === "root" ? lanes.root : lanes.children[lane].items;
}

function setItems(lanes: Lanes, lane: string, items: TimelineItem[]): Lanes {
  if (lane === "root") return { ...lanes, root: items };
  return { ...lanes, children: { ...lanes.children, [lane]: { ...lanes.children[lane], items } } };
}

function updateCall(items: TimelineItem[], callId: string, patch: Partial<SubCall>): TimelineItem[] | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.kind === "sub_lm" && item.call.callId === callId) {
      const next = items.slice();
      next[i] = { ...item, call: { ...item.call, ...patch } };
      return next;
    }
    if (item.kind === "batch") {
      const at = item.calls.findIndex((c) => c.callId === callId);
      if (at >= 0) {
        const calls = item.calls.slice();
        calls[at] = { ...calls[at], ...patch };
        const next = items.slice();
        next[i] = { ...item, calls };
        return next;
      }
    }
  }
  return null;
}

function place(items: TimelineItem[], event: FleetEvent): TimelineItem[] {
  const key = `${event.seq}`;
  switch (event.type) {
    case "output": {
      const last = items[items.length - 1];
      if (last?.kind === "output" && last.stream === event.stream) {
        const merged = { ...last, text: last.text + event.text, omitted: last.omitted + event.omitted_chars };
        return [...items.slice(0, -1), merged];
      }
      return [...items, { kind: "output", key, stream: event.stream, text: event.text, omitted: event.omitted_chars }];
    }
    case "tool_call":
      return [...items, { kind: "tool", key: event.call_id, name: event.name, args: event.args, done: false, ok: true, result: "", error: null }];
    case "tool_result": {
      const at = items.findIndex((i) => i.kind === "tool" && i.key === event.call_id);
      if (at < 0) return [...items, { kind: "event", key, event }];
      const next = items.slice();
      const tool = next[at] as Extract<TimelineItem, { kind: "tool" }>;
      next[at] = { ...tool, done: true, ok: event.ok, result: event.result_preview, error: event.error ?? null };
      return next;
    }
    case "sub_lm_start": {
      const call: SubCall = {
        callId: event.call_id,
        model: event.model,
        prompt: event.prompt_preview,
        done: false,
        ok: true,
        response: "",
        error: null,
        latencyMs: 0,
        index: event.batch_index ?? 0,
      };
      if (!event.batch_id) return [...items, { kind: "sub_lm", key: event.call_id, call }];
      const at = items.findIndex((i) => i.kind === "batch" && i.batchId === event.batch_id);
      if (at < 0) {
        return [...items, { kind: "batch", key: `batch:${event.batch_id}`, batchId: event.batch_id, size: event.batch_size ?? 1, calls: [call] }];
      }
      const batch = items[at] as Extract<TimelineItem, { kind: "batch" }>;
      const calls = [...batch.calls, call].sort((a, b) => a.index - b.index);
      const next = items.slice();
      next[at] = { ...batch, calls, size: Math.max(batch.size, event.batch_size ?? calls.length) };
      return next;
    }
    case "sub_lm_end":
      return (
        updateCall(items, event.call_id, {
          done: true,
          ok: event.ok,
          response: event.response_preview,
          error: event.error ?? null,
          latencyMs: event.latency_ms,
        }) ?? items
      );
    case "child_start":
      return [...items, { kind: "child", key: `child:${event.child_id}`, childId: event.child_id, task: event.task_preview, depth: event.child_depth }];
    case "usage":
    case "final":
    case "summary":
    case "child_progress":
    case "child_end":
    case "turn_queued":
    case "turn_started":
    case "turn_finished":
      return items;
    default:
      return [...items, { kind: "event", key, event }];
  }
}

function applyChildState(children: Record<string, ChildLane>, event: FleetEvent): Record<string, ChildLane> {
  if (event.type === "child_start") {
    const lane: ChildLane = {
      childId: event.child_id,
      task: event.task_preview,
      depth: event.child_depth,
      status: "running",
      answer: "",
      error: null,
      iteration: 0,
      items: [],
    };
    return { ...children, [event.child_id]: lane };
  }
  if (event.type === "child_progress" && children[event.child_id]) {
    return { ...children, [event.child_id]: { ...children[event.child_id], iteration: event.iteration } };
  }
  if (event.type === "child_end" && children[event.child_id]) {
    const lane = children[event.child_id];
    return {
      ...children,
      [event.child_id]: { ...lane, status: event.ok ? "ok" : "failed", answer: event.answer_preview, error: event.error ?? null },
    };
  }
  return children;
}

function applyRunState(t: Timeline, event: FleetEvent): Timeline {
  switch (event.type) {
    // a run its record already called final (replayed from the start) does not go back to running
    case "turn_queued":
      return FINAL_PHASES.has(t.phase) ? t : { ...t, phase: "running", status: "queued: waiting for a worker" };
    case "turn_started":
      return { ...t, phase: FINAL_PHASES.has(t.phase) ? t.phase : "running", status: null, startedAt: event.ts, input: event.input_preview, turnId: event.turn_id ?? null };
    case "status":
      return { ...t, status: event.message };
    case "reasoning":
    case "code":
      return { ...t, status: `${event.depth ? `child at depth ${event.depth} · ` : ""}iteration ${event.iteration}: ${event.type === "code" ? "running code" : "thinking"}` };
    case "tool_call":
      return { ...t, status: `calling ${event.name}` };
    case "sub_lm_start":
      return { ...t, status: event.batch_id ? `sub-LM batch (${event.batch_size ?? 1} prompts)` : "sub-LM call" };
    case "child_start":
      return { ...t, status: `child RLM started at depth ${event.child_depth}` };
    case "usage":
      return { ...t, usage: event };
    case "final":
      return { ...t, answer: event.answer };
    case "summary":
      return { ...t, summary: event.text };
    case "artifact_created":
      return { ...t, artifacts: [...t.artifacts, event] };
    case "turn_finished":
      return { ...t, phase: "succeeded", endedAt: event.ts, status: null };
    case "turn_failed":
      return { ...t, phase: "failed", endedAt: event.ts, status: null, failure: { code: event.code, message: event.message, action: event.action } };
    case "turn_cancelled":
      return { ...t, phase: "cancelled", endedAt: event.ts, status: null };
    case "turn_interrupted":
      return { ...t, phase: "interrupted", endedAt: event.ts, status: null, failure: { code: "interrupted", message: event.reason } };
    default:
      return t;
  }
}

/** Applies one event; an event at or below the last seen seq is a duplicate and changes nothing. */
export function applyEvent(t: Timeline, event: FleetEvent): Timeline {
  if (event.seq <= t.lastSeq) return t;
  if (t.runId && event.run_id !== t.runId) return t;
  const lane = laneOf(event, t.children);
  let lanes: Lanes = { root: t.root, children: t.children };
  lanes = setItems(lanes, lane, place(itemsOf(lanes, lane), event));
  lanes = { ...lanes, children: applyChildState(lanes.children, event) };
  const next = applyRunState({ ...t, ...lanes, runId: t.runId ?? event.run_id, lastSeq: event.seq }, event);
  return next;
}

/**
 * What the run's record says (GET /runs/{id}: its status and error). Events win: a terminal event already seen
 * is kept. A final record ends a run whose events have no terminal event (a fork's `session_forked` record, a
 * run recovered after a crash); an active record makes a pending run running.
 */
export function applyRunStatus(t: Timeline, status: string, error?: { code?: string; message?: string; action?: string | null } | null): Timeline {
  if (FINAL_PHASES.has(t.phase) || t.phase === "idle") return t;
  if (status === "queued" || status === "running") return t.phase === "pending" ? { ...t, phase: "running" } : t;
  if (!FINAL_PHASES.has(status as RunPhase)) return t;
  const failure = error?.message ? { code: error.code ?? status, message: error.message, action: error.action } : t.failure;
  return { ...t, phase: status as RunPhase, status: null, failure: status === "succeeded" || status === "cancelled" ? t.failure : failure };
}

export function applyEvents(t: Timeline, events: FleetEvent[]): Timeline {
  return events.reduce(applyEvent, t);
}

export function isTerminal(event: FleetEvent): boolean {
  return TERMINAL_TYPES.has(event.type);
}

export function isFinished(t: Timeline): boolean {
  return FINAL_PHASES.has(t.phase);
}
