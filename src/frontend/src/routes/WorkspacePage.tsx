// Workspace: sessions on the left; the conversation, the live run and the composer on the right.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useLocation, useNavigate, useParams } from "react-router";
import { Empty, ErrorView, Loading } from "../components/States";
import { Composer, type TurnRequest } from "../features/composer/Composer";
import { RunPanel } from "../features/run/RunPanel";
import { TurnView, UserMessage } from "../features/run/TurnView";
import { useTurnStarter } from "../features/run/useTurnStarter";
import { exportSession, useSession, useSessionStates, useTurns } from "../features/sessions/queries";
import { SessionSidebar } from "../features/sessions/SessionSidebar";
import { api, call } from "../lib/api/client";
import { useRun } from "../lib/events/useRun";

export function WorkspacePage() {
  const { sessionId } = useParams();
  return (
    <div className="workspace">
      <SessionSidebar activeId={sessionId} />
      <Conversation key={sessionId ?? "new"} sessionId={sessionId} />
    </div>
  );
}

function Conversation({ sessionId }: { sessionId?: string }) {
  const navigate = useNavigate();
  const client = useQueryClient();
  const start = useTurnStarter();
  const session = useSession(sessionId);
  const turns = useTurns(sessionId);
  const states = useSessionStates();
  const handed = useLocation().state as { runId?: string; message?: string } | null;
  const [started, setStarted] = useState<{ runId: string; message: string } | null>(
    handed?.runId ? { runId: handed.runId, message: handed.message ?? "" } : null,
  );
  const active = states.data?.items.find((s) => s.session_id === sessionId)?.active_run?.id;
  const currentRunId = started?.runId ?? active ?? session.data?.last_run_id ?? null;
  const refresh = () => void client.invalidateQueries({ queryKey: ["sessions"] });
  const view = useRun(currentRunId, refresh);
  const run = useQuery({
    queryKey: ["runs", currentRunId],
    enabled: !!currentRunId,
    queryFn: () => call(api.GET("/api/v1/runs/{run_id}", { params: { path: { run_id: currentRunId! } } })),
  });
  const bottom = useRef<HTMLDivElement>(null);

  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: "end" });
  }, [view.timeline.lastSeq, turns.data?.items.length]);

  const send = async (request: TurnRequest) => {
    const made = await start(sessionId, request);
    if (made.sessionId !== sessionId) {
      navigate(`/app/workspace/${made.sessionId}`, { state: { runId: made.runId, message: request.content } });
      return;
    }
    setStarted({ runId: made.runId, message: request.content });
  };

  if (sessionId && session.error) return <ErrorView error={session.error} retry={() => void session.refetch()} />;
  const items = turns.data?.items ?? [];
  const turnId = view.timeline.turnId ?? run.data?.turn_id;
  const currentTurn = items.find((t) => (t.run_id && t.run_id === currentRunId) || (!!turnId && t.id === turnId));
  const history = items.filter((t) => t !== currentTurn);
  const busy = view.timeline.phase === "running";

  return (
    <section className="conversation" aria-label="Conversation">
      <div className="row" style={{ padding: "8px 16px", borderBottom: "1px solid var(--border)" }}>
        <h1 style={{ fontSize: 16, margin: 0 }} className="grow">{sessionId ? session.data?.title || "Untitled session" : "New session"}</h1>
        {sessionId && <button onClick={() => void exportSession(sessionId)}>Export</button>}
      </div>
      <div className="scroll">
        {sessionId && (session.isPending || turns.isPending) && <Loading />}
        {!sessionId && <Empty>Describe a task below to start a new session. Attach files, paste text or give URLs as context.</Empty>}
        {sessionId && turns.data && items.length === 0 && !currentRunId && <Empty>No turns yet. Ask something below.</Empty>}
        {history.map((turn) => <TurnView key={turn.id} turn={turn} />)}
        {currentRunId && (
          <article className="turn stack" aria-label="Current turn">
            <UserMessage text={currentTurn?.user_message ?? started?.message ?? view.timeline.input ?? "…"} />
            <RunPanel view={view} />
          </article>
        )}
        <div ref={bottom} />
      </div>
      <Composer sessionId={sessionId} busy={busy} onSend={send} />
    </section>
  );
}
