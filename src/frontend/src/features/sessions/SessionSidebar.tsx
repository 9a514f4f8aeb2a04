// Session list with search, new, rename and delete. Keyboard: every action is a real button.
import { useState } from "react";
import { Link, useNavigate } from "react-router";
import { Empty, ErrorView, Loading } from "../../components/States";
import { useSessionMutations, useSessions, useSessionStates } from "./queries";
import type { Schemas } from "../../lib/api/client";

export function SessionSidebar({ activeId }: { activeId?: string }) {
  const [q, setQ] = useState("");
  const sessions = useSessions(q);
  const states = useSessionStates();
  const { create } = useSessionMutations();
  const navigate = useNavigate();
  const running = new Set((states.data?.items ?? []).map((s) => s.session_id));

  const newSession = async () => {
    const made = await create.mutateAsync("");
    navigate(`/app/workspace/${made.id}`);
  };

  return (
    <aside className="sidebar" aria-label="Sessions">
      <header>
        <button className="primary" onClick={newSession} disabled={create.isPending}>
          + New session
        </button>
        <input type="search" placeholder="Search sessions" aria-label="Search sessions" value={q} onChange={(e) => setQ(e.target.value)} />
      </header>
      {sessions.isPending && <Loading />}
      {sessions.error && <ErrorView error={sessions.error} retry={() => void sessions.refetch()} />}
      {sessions.data && sessions.data.items.length === 0 && <Empty>{q ? "No session matches." : "No sessions yet. Start one."}</Empty>}
      {sessions.data && sessions.data.items.length > 0 && (
        <ul className="session-list">
          {sessions.data.items.map((s) => (
            <SessionRow key={s.id} session={s} active={s.id === activeId} running={running.has(s.id)} />
          ))}
        </ul>
      )}
    </aside>
  );
}

function SessionRow({ session, active, running }: { session: Schemas["SessionOut"]; active: boolean; running: boolean }) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(session.title);
  const { rename, remove } = useSessionMutations();
  const navigate = useNavigate();
  const label = session.title || "Untitled session";

  const save = async () => {
    await rename.mutateAsync({ id: session.id, title: title.trim() });
    setEditing(false);
  };
  const del = async () => {
    if (!window.confirm(`Delete “${label}” with its turns and runs?`)) return;
    await remove.mutateAsync(session.id);
    if (active) navigate("/app/workspace");
  };

  return (
    <li className={active ? "active" : ""}>
      {editing ? (
        <form className="session-item" onSubmit={(e) => (e.preventDefault(), void save())}>
          <input aria-label="Session title" value={title} onChange={(e) => setTitle(e.target.value)} autoFocus
            onKeyDown={(e) => e.key === "Escape" && setEditing(false)} />
          <button type="submit">Save</button>
        </form>
      ) : (
        <div className="session-item">
          <Link to={`/app/workspace/${session.id}`} aria-current={active ? "page" : undefined} title={label}>
            {running && <span className="badge ok" aria-label="running">●</span>} {label}
          </Link>
          <button onClick={() => setEditing(true)} aria-label={`Rename ${label}`}>✎</button>
          <button className="danger" onClick={() => void del()} aria-label={`Delete ${label}`}>✕</button>
        </div>
      )}
    </li>
  );
}
