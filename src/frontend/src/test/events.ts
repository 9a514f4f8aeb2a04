// Builders for typed events in tests (only the fields a test cares about; the envelope is filled in).
import type { FleetEvent } from "../lib/api/events.gen";

let seq = 0;
export function resetSeq(): void {
  seq = 0;
}

export function ev<T extends FleetEvent["type"]>(type: T, fields: Partial<Extract<FleetEvent, { type: T }>> = {}): Extract<FleetEvent, { type: T }> {
  seq += 1;
  return {
    id: `e${seq}`,
    type,
    run_id: "run1",
    session_id: "s1",
    seq,
    ts: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString(),
    depth: 0,
    actor: "root",
    parent_id: null,
    ...fields,
  } as Extract<FleetEvent, { type: T }>;
}
