// The view model of one run's timeline, built from generated event types by the reducer in timeline.ts.
import type {
  ArtifactCreated,
  FleetEvent,
  Usage,
} from "../api/events.gen";

export type { FleetEvent };

export interface SubCall {
  callId: string;
  model: string;
  prompt: string;
  done: boolean;
  ok: boolean;
  response: string;
  error: string | null;
  latencyMs: number;
  index: number;
}

export type TimelineItem =
  | { kind: "event"; key: string; event: FleetEvent }
  | { kind: "output"; key: string; stream: "stdout" | "stderr"; text: string; omitted: number }
  | { kind: "tool"; key: string; name: string; args: Record<string, unknown>; done: boolean; ok: boolean; result: string; error: string | null }
  | { kind: "sub_lm"; key: string; call: SubCall }
  | { kind: "batch"; key: string; batchId: string; size: number; calls: SubCall[] }
  | { kind: "child"; key: string; childId: string; task: string; depth: number };

export interface ChildLane {
  childId: string;
  task: string;
  depth: number;
  status: "running" | "ok" | "failed";
  answer: string;
  error: string | null;
  iteration: number;
  items: TimelineItem[];
}

/** "pending": a run whose status is not known yet (neither its events nor its record have said); never shown as
 * running, so a run that already ended (a fork's record has no terminal event) never flashes a running bar. */
export type RunPhase = "idle" | "pending" | "running" | "succeeded" | "failed" | "cancelled" | "interrupted";

export interface Timeline {
  runId: string | null;
  lastSeq: number;
  phase: RunPhase;
  root: TimelineItem[];
  children: Record<string, ChildLane>;
  usage: Usage | null;
  answer: string | null;
  summary: string | null;
  artifacts: ArtifactCreated[];
  status: string | null;
  input: string | null;
  turnId: string | null;
  startedAt: string | null;
  endedAt: string | null;
  failure: { code: string; message: string; action?: string | null } | null;
}

export const TERMINAL_TYPES = new Set(["turn_finished", "turn_failed", "turn_cancelled", "turn_interrupted"]);
