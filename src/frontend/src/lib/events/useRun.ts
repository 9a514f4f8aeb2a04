// React state for one run: follows its events (replay, then live, resuming after drops) into a Timeline.
import { useEffect, useReducer, useState } from "react";
import type { FleetEvent } from "../api/events.gen";
import { followRun, type FollowState, type SocketError } from "./socket";
import { fetchTicket } from "./ticket";
import { applyEvent, emptyTimeline } from "./timeline";
import type { Timeline } from "./types";

type Action = { type: "reset"; runId: string | null } | { type: "event"; event: FleetEvent };

interface State {
  timeline: Timeline;
  events: FleetEvent[];
}

function initial(runId: string | null): State {
  return { timeline: emptyTimeline(runId), events: [] };
}

function reducer(state: State, action: Action): State {
  if (action.type === "reset") return initial(action.runId);
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

export function useRun(runId: string | null, onTerminal?: () => void): RunView {
  const [{ timeline, events }, dispatch] = useReducer(reducer, runId, initial);
  const [connection, setConnection] = useState<FollowState | "idle">("idle");
  const [error, setError] = useState<SocketError | null>(null);

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
        if (state === "ended") onTerminal?.();
      },
    });
    return () => follower.close();
    // onTerminal is a callback prop; re-following on each render would replay the run.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [runId]);

  return { timeline, events, connection, error };
}
