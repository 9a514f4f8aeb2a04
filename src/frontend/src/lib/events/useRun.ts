// React state for one run: follows its events (replay, then live, resuming after drops) into a Timeline, and reads
// its record (GET /runs/{id}), which says whether a run with no terminal event is still active or already ended.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useReducer, useState } from "react";
import type { FleetEvent } from "../api/events.gen";
import { api, call } from "../api/client";
import { refreshAfterWrite } from "../refresh";
import { followRun, type FollowState, type SocketError } from "./socket";
import { fetchTicket } from "./ticket";
import { applyEvent, applyRunStatus, emptyTimeline } from "./timeline";
import type { Timeline } from "./types";

type RunError = { code?: string; message?: string; action?: string | null } | null;
type Action =
  | { type: "reset"; runId: string | null }
  | { type: "event"; event: FleetEvent }
  | { type: "record"; runId: string; status: string; error: RunError };

interface State {
  timeline: Timeline;
  events: FleetEvent[];
}

function initial(runId: string | null): State {
  return { timeline: emptyTimeline(runId), events: [] };
}

function reducer(state: State, action: Action): State {
  if (action.type === "reset") return initial(action.runId);
  if (action.type === "record") {
    if (action.runId !== state.timeline.runId) return state;
    const timeline = applyRunStatus(state.timeline, action.status, action.error);
    return timeline === state.timeline ? state : { ...state, timeline };
  }
  const timeline = applyEvent(state.timeline, action.event);
  if (timeline === state.timeline) return state;
  return { timeline, events: [...state.events, action.event] };
}

export interface RunView {
  timeline: Timeline;
  /** Every event of the run once, in seq order (the run tree is built from these). */
  events: FleetEvent[];
  connection: FollowState | "idle";
  error: SocketError | null;
}

/** The run's record, shared with every view of the same run (query key ["runs", id]). */
export function useRunRecord(runId: string | null) {
  return useQuery({
    queryKey: ["runs", runId],
    enabled: !!runId,
    queryFn: () => call(api.GET("/api/v1/runs/{run_id}", { params: { path: { run_id: runId! } } })),
  });
}

export function useRun(runId: string | null, onTerminal?: () => void): RunView {
  const [{ timeline, events }, dispatch] = useReducer(reducer, runId, initial);
  const [connection, setConnection] = useState<FollowState | "idle">("idle");
  const [error, setError] = useState<SocketError | null>(null);
  const client = useQueryClient();
  const record = useRunRecord(runId);

  useEffect(() => {
    dispatch({ type: "reset", runId });
    setError(null);
    if (!runId) {
      setConnection("idle");
      return;
    }
    const follower = followRun({
      runId,
      ticket: fetchTicket,
      onEvent: (event) => dispatch({ type: "event", event }),
      onState: (state, err) => {
        setConnection(state);
        setError(state === "live" || state === "ended" ? null : (err ?? null));
        if (state === "ended") {
          // the stream ended: the record now says how (a run without a terminal event ends on it)
          void refreshAfterWrite(client, { queryKey: ["runs", runId], exact: true });
          onTerminal?.();
        }
      },
    });
    return () => follower.close();
    // onTerminal is a callback prop; re-following on each render would replay the run.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [runId]);

  const status = record.data?.id === runId ? record.data?.status : undefined;
  useEffect(() => {
    if (runId && status) dispatch({ type: "record", runId, status, error: (record.data?.error ?? null) as RunError });
    // the record's error only matters with its status
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [runId, status, timeline.runId]);

  return { timeline, events, connection, error };
}
