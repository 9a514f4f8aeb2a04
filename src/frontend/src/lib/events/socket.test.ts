import { beforeEach, describe, expect, it } from "vitest";
import { ev, resetSeq } from "../../test/events";
import type { FleetEvent } from "../api/events.gen";
import { followRun, startTurn, type FollowState } from "./socket";

/** A scripted in-memory socket: the test plays the server's side. */
class FakeSocket {
  static all: FakeSocket[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((m: { data: string }) => void) | null = null;
  onclose: (() => void) | null = null;
  onerror: (() => void) | null = null;
  sent: string[] = [];
  closed = false;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
    queueMicrotask(() => this.onopen?.());
  }
  send(data: string) { this.sent.push(data); }
  close() { if (!this.closed) { this.closed = true; this.onclose?.(); } }
  push(frame: unknown) { this.onmessage?.({ data: JSON.stringify(frame) }); }
  drop() { this.closed = true; this.onclose?.(); }
}

const factory = (url: string) => new FakeSocket(url) as unknown as WebSocket;
const tick = () => new Promise((r) => setTimeout(r, 0));

beforeEach(() => {
  FakeSocket.all = [];
  resetSeq();
});

describe("followRun", () => {
  it("resumes after a drop from the last seq, delivering each event once", async () => {
    const got: FleetEvent[] = [];
    const states: FollowState[] = [];
    const events = [ev("turn_started"), ev("reasoning", { text: "a" }), ev("code", { code: "x" }), ev("final", { answer: "done", fields: {} }), ev("turn_finished")];
    followRun({ runId: "run1", ticket: async () => "T", factory, backoff: () => 0, onEvent: (e) => got.push(e), onState: (s) => states.push(s) });
    await tick();
    const first = FakeSocket.all[0];
    expect(first.url).toContain("run_id=run1");
    expect(first.url).toContain("after=0");
    expect(first.url).toContain("ticket=T");
    first.push({ type: "event", data: events[0] });
    first.push({ type: "event", data: events[1] });
    first.drop();
    await tick(); await tick();
    const second = FakeSocket.all[1];
    expect(second.url).toContain("after=2");
    // a server that replays a little too much is harmless: seq dedupes
    for (const e of events.slice(1)) second.push({ type: "event", data: e });
    second.push({ type: "end", last_seq: 5 });
    expect(got.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(states).toContain("reconnecting");
    expect(states[states.length - 1]).toBe("ended");
  });

  it("stops on an error frame and reports it", async () => {
    let error: unknown = null;
    followRun({ runId: "nope", ticket: async () => null, factory, onEvent: () => undefined, onState: (s, e) => { if (s === "failed") error = e; } });
    await tick();
    FakeSocket.all[0].push({ type: "error", code: "not_found", message: "no such run or session" });
    FakeSocket.all[0].drop();
    await tick();
    expect(FakeSocket.all).toHaveLength(1);
    expect(error).toMatchObject({ code: "not_found" });
  });
});

describe("startTurn", () => {
  it("sends one message frame and resolves with the ack's run id", async () => {
    const pending = startTurn({ session_id: "s1", content: "hi", idempotency_key: "k" }, async () => null, factory);
    await tick(); await tick();
    const socket = FakeSocket.all[0];
    expect(JSON.parse(socket.sent[0])).toMatchObject({ type: "message", session_id: "s1", content: "hi", idempotency_key: "k" });
    socket.push({ type: "ack", run_id: "r9", session_id: "s1" });
    await expect(pending).resolves.toBe("r9");
    expect(socket.closed).toBe(true);
  });

  it("rejects with the server's error code", async () => {
    const pending = startTurn({ session_id: "s1", content: "hi", idempotency_key: "k" }, async () => null, factory);
    await tick(); await tick();
    FakeSocket.all[0].push({ type: "error", code: "turn_in_progress", message: "a turn is running", action: "wait or cancel it" });
    await expect(pending).rejects.toMatchObject({ code: "turn_in_progress", action: "wait or cancel it" });
  });
});
