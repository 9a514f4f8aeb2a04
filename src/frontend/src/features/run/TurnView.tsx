// One committed turn in the history: the user's message and answer; its steps are replayed on demand.
import { useState } from "react";
import { Markdown } from "../../components/Lazy";
import type { Schemas } from "../../lib/api/client";
import { useRun } from "../../lib/events/useRun";
import { RunPanel } from "./RunPanel";

export function UserMessage({ text }: { text: string }) {
  return <div className="bubble-user" aria-label="Your message">{text}</div>;
}

export function TurnView({ turn, linked = false }: { turn: Schemas["TurnOut"]; linked?: boolean }) {
  const [open, setOpen] = useState(linked);
  return (
    <article className="turn stack" aria-label={`Turn ${turn.index + 1}`}>
      <UserMessage text={turn.user_message} />
      {open && turn.run_id ? (
        <PastRun runId={turn.run_id} />
      ) : (
        <>
          {turn.answer ? <div className="answer"><Markdown text={turn.answer} /></div> : <p className="muted">No answer.</p>}
          {turn.run_id && <button className="link" onClick={() => setOpen(true)}>Show steps</button>}
        </>
      )}
    </article>
  );
}

function PastRun({ runId }: { runId: string }) {
  const view = useRun(runId);
  return <RunPanel view={view} />;
}
