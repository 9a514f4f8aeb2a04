// Forking a session after one of its turns, and "Edit and rerun": a fork before the edited turn plus a new
// turn with the edited task. The server does the copying (POST /sessions/{id}/fork); this only sequences it.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, call, type Schemas } from "../../lib/api/client";
import type { TurnRequest } from "../composer/Composer";
import { rememberMode, savedMode, type Mode } from "../composer/mode";
import { refreshAfterWrite } from "../../lib/refresh";

const MODES: readonly string[] = ["auto", "direct", "tools", "rlm"];

/** Turn N (index N-1) is edited by forking after turn N-1, i.e. after `index` turns. */
export const forkPointForEdit = (turn: Pick<Schemas["TurnOut"], "index">): number => turn.index;
/** "Fork from here" on turn N keeps turns 1..N. */
export const forkPointForTurn = (turn: Pick<Schemas["TurnOut"], "index">): number => turn.index + 1;

export function forkSession(sessionId: string, afterTurn?: number): Promise<Schemas["SessionOut"]> {
  return call(
    api.POST("/api/v1/sessions/{session_id}/fork", {
      params: { path: { session_id: sessionId } },
      body: afterTurn === undefined ? {} : { after_turn: afterTurn },
    }),
  );
}

/** The mode a rerun uses: the edited turn's own run mode when it is a turn mode, else the session's choice. */
export function rerunMode(runMode: string | null | undefined, sessionId: string): Mode {
  return runMode && MODES.includes(runMode) ? (runMode as Mode) : savedMode(sessionId);
}

export function useFork() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ sessionId, afterTurn }: { sessionId: string; afterTurn?: number }) => forkSession(sessionId, afterTurn),
    onSuccess: (made, { sessionId }) => {
      rememberMode(made.id, savedMode(sessionId));
      void refreshAfterWrite(client, { queryKey: ["sessions"] });
    },
  });
}

/** Everything "Edit and rerun" needs before navigating: the fork and the request for its new turn. */
export async function prepareRerun(
  sessionId: string,
  turn: Schemas["TurnOut"],
  content: string,
): Promise<{ fork: Schemas["SessionOut"]; request: TurnRequest }> {
  const run = turn.run_id
    ? await call(api.GET("/api/v1/runs/{run_id}", { params: { path: { run_id: turn.run_id } } })).catch(() => null)
    : null;
  const mode = rerunMode(run?.execution_mode, sessionId);
  const fork = await forkSession(sessionId, forkPointForEdit(turn));
  rememberMode(fork.id, mode);
  return { fork, request: { content, execution_mode: mode } };
}
