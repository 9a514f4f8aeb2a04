// Where a fork came from ("Forked from <title> after turn N", linked) and what the fork shares with it (from its
// session_forked event), plus the sessions forked from this one.
import { Link } from "react-router";
import type { Schemas } from "../../lib/api/client";
import type { FleetEvent, SessionForked } from "../../lib/api/events.gen";
import { useSession } from "../sessions/queries";
import { ForkIcon } from "./ForkIcon";

export function ForkOrigin({ session, events }: { session: Schemas["SessionDetail"]; events: FleetEvent[] }) {
  const originId = session.forked_from_id;
  const origin = useSession(originId ?? undefined);
  if (!originId) return null;
  const forked = events.find((e): e is SessionForked => e.type === "session_forked");
  const turns = session.forked_after_turn ?? 0;
  const point = turns === 0 ? "before its first turn" : `after turn ${turns}`;
  const title = origin.data ? origin.data.title || "Untitled session" : origin.error ? "a deleted session" : "…";
  return (
    <aside className="mb-3 rounded-lg border border-line bg-panel px-3 py-2 text-[13px]" aria-label="Fork origin" data-testid="fork-origin">
      <ForkIcon className="text-muted" />{" "}
      Forked from{" "}
      {origin.error ? <span>{title}</span> : <Link to={`/app/workspace/${originId}`}>{title}</Link>} {point}
      {forked && (forked.shared?.length || forked.not_shared?.length) ? (
        <details className="mt-1">
          <summary className="muted">What the fork shares with its origin</summary>
          <ul className="m-0 mt-1 pl-5">
            {forked.shared?.map((s) => <li key={`s-${s}`}>Shared: {s}</li>)}
            {forked.not_shared?.map((s) => <li key={`n-${s}`}>Not shared: {s}</li>)}
          </ul>
        </details>
      ) : null}
    </aside>
  );
}

export function ForkList({ forks }: { forks: Schemas["ForkRef"][] }) {
  if (forks.length === 0) return null;
  return (
    <nav className="mb-3 rounded-lg border border-line bg-panel px-3 py-2 text-[13px]" aria-label="Forks of this session" data-testid="fork-list">
      <span className="step-label">Forks ({forks.length})</span>
      <ul className="m-0 mt-1 list-none p-0">
        {forks.map((f) => (
          <li key={f.id} className="flex min-w-0 gap-2">
            <Link className="min-w-0 truncate" to={`/app/workspace/${f.id}`}>{f.title || "Untitled session"}</Link>
            <span className="muted shrink-0">{f.forked_after_turn ? `after turn ${f.forked_after_turn}` : "before turn 1"}</span>
          </li>
        ))}
      </ul>
    </nav>
  );
}
