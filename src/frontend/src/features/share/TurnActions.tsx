// Actions on one earlier turn: "Fork from here" (a new session keeping turns 1..N) and "Edit and rerun" (edit the
// task inline; the rerun happens in a fork made before this turn, so the original session stays as it was).
import { useState, type KeyboardEvent } from "react";
import { ForkIcon } from "./ForkIcon";

export function TurnActions({ number, onFork, onEdit, busy }: {
  /** The turn's number, counting from 1. */
  number: number;
  onFork: () => void;
  onEdit: () => void;
  busy: boolean;
}) {
  return (
    <div className="flex flex-wrap justify-end gap-1 text-[12px]" role="group" aria-label={`Turn ${number} actions`}>
      <button type="button" className="turn-action" onClick={onEdit} disabled={busy} title="Edit this task and run it again in a fork">
        ✎ Edit and rerun
      </button>
      <button type="button" className="turn-action" onClick={onFork} disabled={busy} title={`New session with turns 1–${number}`}>
        <ForkIcon /> Fork from here
      </button>
    </div>
  );
}

/** The inline editor of a turn's task; Ctrl/Cmd+Enter reruns, Esc cancels. */
export function EditTask({ number, initial, busy, onRun, onCancel }: {
  number: number;
  initial: string;
  busy: boolean;
  onRun: (text: string) => void;
  onCancel: () => void;
}) {
  const [text, setText] = useState(initial);
  const ready = text.trim().length > 0 && !busy;
  const onKey = (e: KeyboardEvent) => {
    if (e.key === "Escape") (e.preventDefault(), onCancel());
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && ready) (e.preventDefault(), onRun(text));
  };
  const kept = number - 1;
  return (
    <form className="rounded-lg border border-accent bg-panel p-2" aria-label={`Edit turn ${number}`}
      onSubmit={(e) => (e.preventDefault(), ready && onRun(text))}>
      <label htmlFor={`edit-turn-${number}`}>Edited task for turn {number}</label>
      <textarea id={`edit-turn-${number}`} rows={3} value={text} autoFocus onChange={(e) => setText(e.target.value)} onKeyDown={onKey} />
      <p className="muted m-0 mt-1 text-[12px]">
        Runs in a new session forked {kept === 0 ? "before the first turn" : `after turn ${kept}`}; this session stays as it is.
      </p>
      <div className="mt-1.5 flex flex-wrap justify-end gap-2">
        <button type="button" onClick={onCancel} disabled={busy}>Cancel</button>
        <button type="submit" className="primary" disabled={!ready}>{busy ? "Forking…" : "Rerun in a fork ▶"}</button>
      </div>
    </form>
  );
}
