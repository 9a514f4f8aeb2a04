// Workspace: sessions on the left; the conversation, the live run and the composer on the right.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Link, useLocation, useNavigate, useParams, useSearchParams } from "react-router";
import { Empty, ErrorView, Loading } from "../components/States";
import { Composer, type TurnRequest } from "../features/composer/Composer";
import { RunBar } from "../features/run/RunBar";
import { RunPanel } from "../features/run/RunPanel";
import { rememberMode } from "../features/composer/mode";
import { TurnView, UserMessage, type TurnForking } from "../features/run/TurnView";
import { useTurnStarter } from "../features/run/useTurnStarter";
import { useSession, useSessionStates, useTurns } from "../features/sessions/queries";
import { SessionSidebar, TitleEditor } from "../features/sessions/SessionSidebar";
import { ForkList, ForkOrigin } from "../features/share/ForkInfo";
import { forkPointForTurn, prepareRerun, useFork } from "../features/share/forks";
import { SessionMenu } from "../features/share/SessionMenu";
import { SessionPanel, usePanelOpen } from "../features/session-panel/SessionPanel";
import type { LiveContext } from "../features/session-panel/ContextTab";
import type { Schemas } from "../lib/api/client";
import { isNotFound } from "../lib/api/errors";
import { useRun, useRunRecord } from "../lib/events/useRun";
import { refreshAfterWrite } from "../lib/refresh";

export function WorkspacePage() {
  const { sessionId } = useParams();
  const [panelOpen, setPanelOpen] = usePanelOpen();
  const [live, setLive] = useState<LiveContext | null>(null);
  const missing = isNotFound(useSession(sessionId).error);
  const panel = !!sessionId && panelOpen && !missing;
  return (
    <div className={`workspace${panel ? " with-panel" : ""}`}>
      <SessionSidebar activeId={sessionId} />
      <Conversation key={sessionId ?? "new"} sessionId={sessionId} panelOpen={panel} onTogglePanel={() => setPanelOpen(!panelOpen)} onLiveContext={setLive} />
      {panel && <SessionPanel sessionId={sessionId} live={live?.sessionId === sessionId ? live : null} onClose={() => setPanelOpen(false)} />}
    </div>
  );
}

type Handed = { runId?: string; message?: string; request?: TurnRequest } | null;

function Conversation({ sessionId, panelOpen, onTogglePanel, onLiveContext }: {
  sessionId?: string;
  panelOpen: boolean;
  onTogglePanel: () => void;
  onLiveContext: (live: LiveContext | null) => void;
}) {
  const navigate = useNavigate();
  const client = useQueryClient();
  const start = useTurnStarter();
  const session = useSession(sessionId);
  const turns = useTurns(sessionId);
  const states = useSessionStates();
  const location = useLocation();
  const handed = location.state as Handed;
  const [started, setStarted] = useState<{ runId: string; message: string; request?: TurnRequest } | null>(
    handed?.runId ? { runId: handed.runId, message: handed.message ?? "", request: handed.request } : null,
  );
  // The run handed over by navigation is taken once: leaving it in the history entry would make a reload show
  // that run as the current turn after later turns. A reload shows what the URL and the server say.
  useEffect(() => {
    if (handed?.runId) navigate({ pathname: location.pathname, search: location.search }, { replace: true, state: null });
    // only the state this page was opened with
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const [params] = useSearchParams();
  const [renaming, setRenaming] = useState(false);
  const [actionError, setActionError] = useState<string | null>(null);
  const [rerunning, setRerunning] = useState(false);
  const fork = useFork();
  const linkedRun = params.get("run");
  const active = states.data?.items.find((s) => s.session_id === sessionId)?.active_run?.id;
  const currentRunId = started?.runId ?? active ?? session.data?.last_run_id ?? null;
  const refresh = () => {
    void refreshAfterWrite(client, { queryKey: ["sessions"] });
    void refreshAfterWrite(client, { queryKey: ["runs"] });
    void refreshAfterWrite(client, { queryKey: ["volume"] });
  };
  const view = useRun(currentRunId, refresh);
  const run = useRunRecord(currentRunId);
  const bottom = useRef<HTMLDivElement>(null);

  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);

  // follow the run only while the user is at the bottom: scrolling up to read stops the auto-scroll
  useEffect(() => {
    if (pinned.current && !linkedRun) bottom.current?.scrollIntoView?.({ block: "end" });
  }, [view.timeline.lastSeq, turns.data?.items.length, linkedRun]);
  const onScroll = () => {
    const el = scroller.current;
    if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  };

  const send = async (request: TurnRequest) => {
    const made = await start(sessionId, request);
    pinned.current = true;
    if (made.sessionId !== sessionId) {
      rememberMode(made.sessionId, request.execution_mode ?? "auto");
      navigate(`/app/workspace/${made.sessionId}`, { state: { runId: made.runId, message: request.content, request } });
      return;
    }
    setStarted({ runId: made.runId, message: request.content, request });
  };

  const forkAt = (afterTurn?: number) => {
    if (!sessionId) return;
    setActionError(null);
    fork.mutate({ sessionId, afterTurn }, {
      onSuccess: (made) => navigate(`/app/workspace/${made.id}`),
      onError: (e) => setActionError(`Fork failed: ${e.message}`),
    });
  };
  const rerun = async (turn: Schemas["TurnOut"], task: string) => {
    if (!sessionId) return;
    setActionError(null);
    setRerunning(true);
    try {
      const { fork: made, request } = await prepareRerun(sessionId, turn, task);
      const started = await start(made.id, request);
      navigate(`/app/workspace/${made.id}`, { state: { runId: started.runId, message: request.content, request } });
    } catch (e) {
      setActionError(`Edit and rerun failed: ${e instanceof Error ? e.message : String(e)}`);
      setRerunning(false);
    }
  };
  const forking: TurnForking | undefined = sessionId
    ? { onFork: (turn) => forkAt(forkPointForTurn(turn)), onRerun: (turn, task) => void rerun(turn, task), busy: fork.isPending || rerunning }
    : undefined;

  const items = turns.data?.items ?? [];
  const turnId = view.timeline.turnId ?? run.data?.turn_id;
  const currentTurn = items.find((t) => (t.run_id && t.run_id === currentRunId) || (!!turnId && t.id === turnId));
  const contextEvents = view.events.filter((e) => e.type === "context_loaded" && !e.depth);
  const liveTurn = currentTurn ? currentTurn.index + 1 : items.length + 1;
  useEffect(() => {
    onLiveContext(sessionId && currentRunId ? { sessionId, runId: currentRunId, turn: liveTurn, events: contextEvents } : null);
    // the list changes only when a context_loaded event arrives
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [sessionId, currentRunId, liveTurn, contextEvents.length]);

  if (sessionId && isNotFound(session.error)) return <MissingSession />;
  if (sessionId && session.error) return <ErrorView error={session.error} retry={() => void session.refetch()} />;
  const history = items.filter((t) => t !== currentTurn);
  // a fork's first run only records the fork (session_forked); it is shown as the origin banner, not as a turn
  const forkRun = !started && run.data?.execution_mode === "fork" && run.data.id === currentRunId;
  // a run this page just started counts as busy before its first event arrives (no double send)
  const busy = view.timeline.phase === "running" || (view.timeline.phase === "pending" && started?.runId === currentRunId);
  const failed = view.timeline.phase === "failed" || view.timeline.phase === "interrupted";
  const lastRequest: TurnRequest | null = started?.request ??
    (currentTurn || view.timeline.input ? { content: currentTurn?.user_message ?? view.timeline.input ?? "", execution_mode: (run.data?.execution_mode as TurnRequest["execution_mode"]) ?? null } : null);
  const retry = lastRequest ? () => void send(lastRequest).catch(() => undefined) : undefined;

  return (
    <section className="conversation" aria-label="Conversation">
      <div className="row conversation-head" style={{ padding: "8px 16px", borderBottom: "1px solid var(--border)" }}>
        {renaming && session.data ? (
          <TitleEditor session={session.data} onDone={() => setRenaming(false)} className="row grow" />
        ) : (
          <h1 style={{ fontSize: 16, margin: 0 }} className="grow min-w-0 basis-[8rem] truncate md:basis-[12rem]" onDoubleClick={() => setRenaming(!!session.data)}>
            {sessionId ? session.data?.title || "Untitled session" : "New session"}
          </h1>
        )}
        {sessionId && (
          <div className="flex shrink-0 flex-wrap gap-2">
            {session.data && !renaming && <button onClick={() => setRenaming(true)} aria-label="Rename this session"><span aria-hidden="true">✎</span><span className="phone-hide"> Rename</span></button>}
            <button type="button" onClick={onTogglePanel} aria-expanded={panelOpen} aria-controls={panelOpen ? "session-panel" : undefined} title="Context, artifacts and MEMORIES.md">
              {panelOpen ? "Hide panel" : "Panel"}
            </button>
            <SessionMenu sessionId={sessionId} onFork={() => forkAt()} forking={fork.isPending} onError={setActionError} />
          </div>
        )}
      </div>
      {actionError && (
        <div className="flex items-center gap-2 border-b border-line bg-panel px-4 py-1.5 text-[13px] text-err" role="alert" data-testid="action-error">
          <span className="min-w-0 grow">{actionError}</span>
          <button type="button" className="link" onClick={() => setActionError(null)} aria-label="Dismiss the error">Dismiss</button>
        </div>
      )}
      <RunBar view={view} />
      <div className="scroll" ref={scroller} onScroll={onScroll}>
        {sessionId && (session.isPending || turns.isPending) && <Loading />}
        {!sessionId && <Empty>Describe a task below to start a new session. Attach files, paste text or give URLs as context.</Empty>}
        {session.data && <ForkOrigin session={session.data} events={forkRun ? view.events : []} />}
        {session.data && <ForkList forks={session.data.forks} />}
        {sessionId && turns.data && items.length === 0 && (!currentRunId || forkRun) && <Empty>No turns yet. Ask something below.</Empty>}
        {history.map((turn) => <TurnView key={turn.id} turn={turn} linked={!!linkedRun && turn.run_id === linkedRun} forking={forking} />)}
        {currentRunId && !forkRun && (
          <article className="turn stack" aria-label="Current turn">
            <UserMessage text={currentTurn?.user_message ?? started?.message ?? view.timeline.input ?? "…"} />
            <RunPanel view={view} onRetry={retry} outcome={run.data?.outcome} stopReason={run.data?.stop_reason} traceUrl={run.data?.trace_url} />
          </article>
        )}
        <div ref={bottom} />
      </div>
      <Composer sessionId={sessionId} busy={busy} onSend={send} restore={failed && started?.request ? started.request : null} />
    </section>
  );
}

/** A session URL that names no session of this user (a typo, a deleted session, someone else's): said once. */
function MissingSession() {
  return (
    <section className="conversation" aria-label="Conversation">
      <div className="page">
        <div className="panel stack" role="alert" aria-labelledby="missing-title" data-testid="missing-session">
          <h1 id="missing-title" className="h1">No such session</h1>
          <p className="m-0">This address names no session of yours: it may have been deleted, or the link is mistyped.</p>
          <p className="m-0"><Link to="/app/workspace">Back to your sessions</Link> (or pick one on the left).</p>
        </div>
      </div>
    </section>
  );
}
