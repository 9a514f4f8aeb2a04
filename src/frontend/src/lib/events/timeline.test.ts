import { beforeEach, describe, expect, it } from "vitest";
import { ev, resetSeq } from "../../test/events";
import { applyEvent, applyEvents, applyRunStatus, emptyTimeline } from "./timeline";

beforeEach(resetSeq);

describe("timeline reducer", () => {
  it("ignores events at or below the last seq (replay after reconnect)", () => {
    const events = [ev("turn_started", { input_preview: "hi" }), ev("reasoning", { text: "think" }), ev("code", { code: "print(1)" })];
    const once = applyEvents(emptyTimeline("run1"), events);
    const twice = applyEvents(once, [events[1], events[2], events[0]]);
    expect(twice).toBe(once);
    expect(once.root.map((i) => i.kind)).toEqual(["event", "event"]);
    expect(once.lastSeq).toBe(3);
    expect(once.input).toBe("hi");
  });

  it("shows a queued turn waiting for a worker until a worker starts it", () => {
    const queued = applyEvent(emptyTimeline("run1"), ev("turn_queued", { queue: "turns" }));
    expect(queued.phase).toBe("running");
    expect(queued.status).toBe("queued: waiting for a worker");
    expect(queued.root).toHaveLength(0);
    const started = applyEvent(queued, ev("turn_started", { input_preview: "hi" }));
    expect(started.status).toBeNull();
    expect(started.input).toBe("hi");
  });

  it("ignores events of another run", () => {
    const t = applyEvent(emptyTimeline("run1"), ev("reasoning", { text: "x", run_id: "other" }));
    expect(t.root).toHaveLength(0);
  });

  it("groups the sub-LM calls of one batch and tracks their completion", () => {
    const t = applyEvents(emptyTimeline("run1"), [
      ev("sub_lm_start", { call_id: "b", model: "m", batch_id: "B", batch_index: 1, batch_size: 2, prompt_preview: "second" }),
      ev("sub_lm_start", { call_id: "a", model: "m", batch_id: "B", batch_index: 0, batch_size: 2, prompt_preview: "first" }),
      ev("sub_lm_end", { call_id: "a", ok: true, response_preview: "A", latency_ms: 5 }),
      ev("sub_lm_start", { call_id: "solo", model: "m", prompt_preview: "alone" }),
      ev("sub_lm_end", { call_id: "b", ok: false, error: "boom" }),
    ]);
    expect(t.root).toHaveLength(2);
    const batch = t.root[0];
    if (batch.kind !== "batch") throw new Error("expected a batch");
    expect(batch.size).toBe(2);
    expect(batch.calls.map((c) => [c.prompt, c.done, c.ok])).toEqual([["first", true, true], ["second", true, false]]);
    expect(t.root[1].kind).toBe("sub_lm");
  });

  it("gives child RLMs their own lanes, nested by actor and parent", () => {
    const t = applyEvents(emptyTimeline("run1"), [
      ev("child_start", { child_id: "c1", task_preview: "sub task", child_depth: 1 }),
      ev("code", { code: "x = 1", actor: "child:c1", depth: 1, parent_id: "c1" }),
      ev("child_start", { child_id: "c2", task_preview: "grandchild", child_depth: 2, actor: "child:c1", depth: 1, parent_id: "c1" }),
      ev("reasoning", { text: "deep", actor: "child:c2", depth: 2, parent_id: "c2" }),
      ev("child_progress", { child_id: "c1", iteration: 3 }),
      ev("child_end", { child_id: "c2", ok: true, answer_preview: "g" }),
      ev("child_end", { child_id: "c1", ok: false, error: "failed" }),
    ]);
    expect(t.root.map((i) => i.kind)).toEqual(["child"]);
    expect(t.children.c1.items.map((i) => i.kind)).toEqual(["event", "child"]);
    expect(t.children.c2.items).toHaveLength(1);
    expect(t.children.c1).toMatchObject({ status: "failed", error: "failed", iteration: 3 });
    expect(t.children.c2).toMatchObject({ status: "ok", answer: "g" });
  });

  it("pairs tool calls with results and merges consecutive output chunks", () => {
    const t = applyEvents(emptyTimeline("run1"), [
      ev("tool_call", { call_id: "t1", name: "search", args: { q: "x" } }),
      ev("output", { stream: "stdout", text: "a" }),
      ev("output", { stream: "stdout", text: "b" }),
      ev("output", { stream: "stderr", text: "c" }),
      ev("tool_result", { call_id: "t1", ok: true, result_preview: "found" }),
    ]);
    expect(t.root.map((i) => i.kind)).toEqual(["tool", "output", "output"]);
    expect(t.root[0]).toMatchObject({ done: true, ok: true, result: "found" });
    expect(t.root[1]).toMatchObject({ text: "ab", stream: "stdout" });
  });

  it("records usage, the answer, artifacts and the terminal phase", () => {
    const t = applyEvents(emptyTimeline("run1"), [
      ev("turn_started", {}),
      ev("usage", { tokens_in: 10, tokens_out: 5, lm_calls: 2, cost_usd: 0.01, cost_known: true, iterations: 1, by_role: {} }),
      ev("artifact_created", { name: "a.txt", path: "artifacts/a.txt", size_bytes: 3, sha256: "x", media_type: "text/plain", artifact_id: "A1" }),
      ev("final", { answer: "**42**", fields: {} }),
      ev("summary", { text: "answered" }),
      ev("turn_finished", { mode: "rlm", duration_ms: 10 }),
    ]);
    expect(t.phase).toBe("succeeded");
    expect(t.usage?.lm_calls).toBe(2);
    expect(t.answer).toBe("**42**");
    expect(t.summary).toBe("answered");
    expect(t.artifacts).toHaveLength(1);
    expect(t.endedAt).not.toBeNull();
  });

  it("keeps failure details and cancellation", () => {
    const failed = applyEvent(emptyTimeline("run1"), ev("turn_failed", { code: "lm_unreachable", message: "no LM", action: "check the URL" }));
    expect(failed.phase).toBe("failed");
    expect(failed.failure).toEqual({ code: "lm_unreachable", message: "no LM", action: "check the URL" });
    const cancelled = applyEvent(emptyTimeline("run1"), ev("turn_cancelled", { reason: "cancelled by user" }));
    expect(cancelled.phase).toBe("cancelled");
  });

  it("a run is pending until its events or its record say otherwise; a final record ends a run without a terminal event", () => {
    expect(emptyTimeline("run1").phase).toBe("pending");
    // a fork's record run: one session_forked event, status succeeded, no terminal event
    const fork = applyEvent(emptyTimeline("run1"), ev("session_forked", { origin_session_id: "s0", after_turn: 1, origin_turns: 2 }));
    expect(fork.phase).toBe("pending");
    expect(applyRunStatus(fork, "succeeded").phase).toBe("succeeded");
    expect(applyRunStatus(emptyTimeline("run1"), "running").phase).toBe("running");
    // events win over a record read earlier; a final record is not undone by a replayed turn_started
    const done = applyEvents(emptyTimeline("run1"), [ev("turn_started", { input_preview: "hi" }), ev("turn_finished", {})]);
    expect(applyRunStatus(done, "running").phase).toBe("succeeded");
    const replayed = applyEvent(applyRunStatus(emptyTimeline("run1"), "failed", { code: "x", message: "broke" }), ev("turn_started", { input_preview: "hi" }));
    expect(replayed.phase).toBe("failed");
    expect(replayed.failure).toEqual({ code: "x", message: "broke", action: undefined });
  });
});
