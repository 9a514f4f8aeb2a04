// Session list: search, new, grouped by recency (Today, Yesterday, Previous 7 days, Older), rename, and delete
// with undo (the session disappears at once; the DELETE is sent only when the undo window closes).
import { useEffect, useRef, useState } from "react";
import { Link, useNavigate } from "react-router";
import { Empty, ErrorView, Loading } from "../../components/States";
import type { Schemas } from "../../lib/api/client";
import { useSessionMutations, useSessions, useSessionStates } from "./queries";
import { groupByRecency } from "./recency";

const UNDO_MS = 6000;

export function SessionSidebar({ activeId }: { activeId?: string }) {
  const [q, setQ] = useState("");
  const sessions = useSessions(q);
  const states = useSessionStates();
  const { create, remove } = useSessionMutations();
  const navigate = useNavigate();
  const running = new Set((states.data?.items ?? []).map((s) => s.session_id));
  const [pending, setPending] = useState<Schemas["SessionOut"] | null>(null);
  // on a phone with a session open the list folds into one button, leaving the height to the conversation
  const [listOpen, setListOpen] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const commit = (s: Schemas["SessionOut"]) => {
    remove.mutate(s.id);
    setPending((p) => (p?.id === s.id ? null : p));
  };
  const askDelete = (s: Schemas["SessionOut"]) => {
    if (timer.current) clearTimeout(timer.current);
    if (pending) commit(pending);
    setPending(s);
    timer.current = setTimeout(() => commit(s), UNDO_MS);
    if (s.id === activeId) navigate("/app/workspace");
  };
  const undo = () => {
    if (timer.current) clearTimeout(timer.current);
    setPending(null);
  };
  // leaving the page within the undo window still deletes: the user asked for it
  const pendingRef = useRef(pending);
  pendingRef.current = pending;
  useEffect(() => () => {
    if (timer.current) clearTimeout(timer.current);
    if (pendingRef.current) remove.mutate(pendingRef.current.id);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const newSession = async () => {
    const made = await create.mutateAsync("");
    navigate(`/app/workspace/${made.id}`);
  };
  const items = (sessions.data?.items ?? []).filter((s) => s.id !== pending?.id);
  const groups = groupByRecency(items, new Date());

  return (
    <aside className={`sidebar${activeId ? " folded" : ""}${listOpen ? " list-open" : ""}`} aria-label="Sessions">
      <header>
        <button className="primary" onClick={newSession} disabled={create.isPending}>
          + New session
        </button>
        <input type="search" placeholder="Search sessions" aria-label="Search sessions" value={q} onChange={(e) => setQ(e.target.value)} />
        {activeId && (
          <button type="button" className="list-toggle" aria-expanded={listOpen} onClick={() => setListOpen(!listOpen)}>
            {listOpen ? "Hide sessions" : `Sessions (${items.length})`}
          </button>
        )}
      </header>
      {pending && (
        <div className="flex items-center gap-2 border-b border-line bg-panel-2 px-3 py-1.5 text-[13px]" role="status" data-testid="undo-delete">
          <span className="min-w-0 grow truncate">Deleted “{pending.title || "Untitled session"}”</span>
          <button type="button" onClick={undo}>Undo</button>
        </div>
      )}
      {sessions.isPending && <Loading />}
      {sessions.error && <ErrorView error={sessions.error} retry={() => void sessions.refetch()} />}
      {sessions.data && items.length === 0 && <Empty>{q ? "No session matches." : "No sessions yet. Start one."}</Empty>}
      {items.length > 0 && (
        <div className="session-list">
          {groups.map(([label, list]) => (
            <section key={label} aria-label={label}>
              <h2 className="m-0 px-1.5 pb-0.5 pt-2 text-[11px] font-semibold uppercase tracking-wide text-muted">{label}</h2>
              <ul className="m-0 list-none p-0">
                {list.map((s) => (
                  <SessionRow key={s.id} session={s} active={s.id === activeId} running={running.has(s.id)} onDelete={() => askDelete(s)} />
                ))}
              </ul>
            </section>
          ))}
        </div>
      )}
    </aside>
  );
}

function SessionRow({ session, active, running, onDelete }: { session: Schemas["SessionOut"]; active: boolean; running: boolean; onDelete: () => void }) {
  const [editing, setEditing] = useState(false);
  const label = session.title || "Untitled session";
  return (
    <li className={active ? "active" : ""}>
      {editing ? (
        <TitleEditor session={session} onDone={() => setEditing(false)} className="session-item" />
      ) : (
        <div className="session-item">
          <Link to={`/app/workspace/${session.id}`} aria-current={active ? "page" : undefined} title={label} onDoubleClick={(e) => (e.preventDefault(), setEditing(true))}>
            {running && <span className="badge ok" aria-label="running">●</span>} {label}
          </Link>
          <button onClick={() => setEditing(true)} aria-label={`Rename ${label}`}>✎</button>
          <button className="danger" onClick={onDelete} aria-label={`Delete ${label}`}>✕</button>
        </div>
      )}
    </li>
  );
}

/** Inline title editing: Enter saves, Esc cancels, leaving the field saves. */
export function TitleEditor({ session, onDone, className }: { session: Schemas["SessionOut"]; onDone: () => void; className?: string }) {
  const [title, setTitle] = useState(session.title);
  const { rename } = useSessionMutations();
  const done = useRef(false);
  const save = async () => {
    if (done.current) return;
    done.current = true;
    if (title.trim() !== session.title) await rename.mutateAsync({ id: session.id, title: title.trim() });
    onDone();
  };
  return (
    <form className={className} onSubmit={(e) => (e.preventDefault(), void save())}>
      <input aria-label="Session title" value={title} onChange={(e) => setTitle(e.target.value)} autoFocus onBlur={() => void save()}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            done.current = true;
            onDone();
          }
        }} />
      <button type="submit" onMouseDown={(e) => e.preventDefault()}>Save</button>
    </form>
  );
}
