// One committed turn in the history: the user's message, answer and your rating; its steps are replayed on demand. Earlier
// turns offer "Edit and rerun" and "Fork from here" (both make a fork; this session is never changed).
import { useState } from "react";
import { Markdown } from "../../components/Lazy";
import type { Schemas } from "../../lib/api/client";
import { useRun } from "../../lib/events/useRun";
import { EditTask, TurnActions } from "../share/TurnActions";
import { Feedback } from "./Feedback";
import { RunPanel } from "./RunPanel";

export function UserMessage({ text }: { text: string }) {
  return <div className="bubble-user" aria-label="Your message">{text}</div>;
}

export interface TurnForking {
  /** A fork keeping turns 1..N of this session. */
  onFork: (turn: Schemas["TurnOut"]) => void;
  /** A fork before this turn plus a new turn with the edited task. */
  onRerun: (turn: Schemas["TurnOut"], task: string) => void;
  busy: boolean;
}

export function TurnView({ turn, linked = false, forking }: { turn: Schemas["TurnOut"]; linked?: boolean; forking?: TurnForking }) {
  const [open, setOpen] = useState(linked);
  const [editing, setEditing] = useState(false);
  const number = turn.index + 1;
  return (
    <article className="turn stack" aria-label={`Turn ${number}`}>
      {editing && forking ? (
        <EditTask number={number} initial={turn.user_message} busy={forking.busy} onCancel={() => setEditing(false)}
          onRun={(task) => forking.onRerun(turn, task)} />
      ) : (
        <UserMessage text={turn.user_message} />
      )}
      {forking && !editing && <TurnActions number={number} busy={forking.busy} onEdit={() => setEditing(true)} onFork={() => forking.onFork(turn)} />}
      {open && turn.run_id ? (
        <PastRun runId={turn.run_id} />
      ) : (
        <>
          {turn.answer ? <div className="answer"><Markdown text={turn.answer} /></div> : <NoAnswer turn={turn} />}
          {turn.run_id && <button className="link" onClick={() => setOpen(true)}>Show steps</button>}
          {turn.run_id && turn.answer && <Feedback runId={turn.run_id} />}
        </>
      )}
    </article>
  );
}

const ENDED: Record<string, { label: string; badge: string }> = {
  failed: { label: "failed", badge: "err" },
  interrupted: { label: "interrupted", badge: "err" },
  cancelled: { label: "cancelled", badge: "warn" },
  running: { label: "running", badge: "" },
  queued: { label: "queued", badge: "" },
};

/** A turn without an answer says why: its run failed (with the error), was cancelled or interrupted, or runs. */
function NoAnswer({ turn }: { turn: Schemas["TurnOut"] }) {
  const ended = turn.status ? ENDED[turn.status] : undefined;
  if (!ended) return <p className="muted">No answer.</p>;
  const error = turn.error as { code?: string; message?: string } | null | undefined;
  return (
    <p className="m-0 flex flex-wrap items-baseline gap-2" data-testid="turn-status" data-status={turn.status}>
      <span className={`badge ${ended.badge}`}>{ended.label}</span>
      {error?.message && <span className="text-[13px] text-err">{error.code ? `${error.code}: ` : ""}{error.message}</span>}
    </p>
  );
}

function PastRun({ runId }: { runId: string }) {
  const view = useRun(runId);
  return <RunPanel view={view} />;
}
