// Starting a turn: create the session if needed, send the message frame, and return the new run's id. A session
// created here is deleted again when the server refuses the turn (nothing ran).
import { useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { api, call } from "../../lib/api/client";
import { newKey } from "../../lib/ids";
import { SocketError, startTurn } from "../../lib/events/socket";
import { fetchTicket } from "../../lib/events/ticket";
import type { TurnRequest } from "../composer/Composer";
import { refreshAfterWrite } from "../../lib/refresh";

export function useTurnStarter() {
  const client = useQueryClient();
  return useCallback(
    async (sessionId: string | undefined, request: TurnRequest): Promise<{ sessionId: string; runId: string }> => {
      let id = sessionId;
      if (!id) {
        // untitled: the server names the session after its first task when the turn is created
        id = (await call(api.POST("/api/v1/sessions", { body: { title: "", origin: "user" } }))).id;
      }
      let runId: string;
      try {
        runId = await startTurn({ ...request, session_id: id, idempotency_key: newKey() }, fetchTicket);
      } catch (error) {
        // refused input creates nothing: the session made for this first turn goes again when the server
        // refused it (an `error` frame); a dropped socket may have started the turn, so the session stays then
        const refused = error instanceof SocketError && !["network_error", "closed"].includes(error.code);
        if (!sessionId && refused) await api.DELETE("/api/v1/sessions/{session_id}", { params: { path: { session_id: id } } });
        throw error;
      }
      void refreshAfterWrite(client, { queryKey: ["sessions"] });
      return { sessionId: id, runId };
    },
    [client],
  );
}
