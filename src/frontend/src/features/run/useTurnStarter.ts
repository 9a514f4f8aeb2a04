// Starting a turn: create the session if needed, send the message frame, and return the new run's id.
import { useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { api, call } from "../../lib/api/client";
import { newKey } from "../../lib/ids";
import { startTurn } from "../../lib/events/socket";
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
        id = (await call(api.POST("/api/v1/sessions", { body: { title: "" } }))).id;
      }
      const runId = await startTurn({ ...request, session_id: id, idempotency_key: newKey() }, fetchTicket);
      void refreshAfterWrite(client, { queryKey: ["sessions"] });
      return { sessionId: id, runId };
    },
    [client],
  );
}
