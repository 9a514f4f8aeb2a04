// Thumbs up/down on a run, with an optional comment and the answer that was expected (feeds optimization). The
// saved rating is read back from the server, so it is shown after a reload and can be changed or cleared.
import { useState } from "react";
import { ErrorView } from "../../components/States";
import { RATING_LABEL, useFeedbackMutations, useRunFeedback, type Rating, type SavedFeedback } from "./feedbackQueries";

const PRESSED = "!bg-accent !text-[var(--accent-text)]";

export function Feedback({ runId }: { runId: string }) {
  const saved = useRunFeedback(runId);
  const { clear } = useFeedbackMutations(runId);
  const [editing, setEditing] = useState(false);
  const [justSaved, setJustSaved] = useState(false);
  if (saved.data && !editing) {
    return (
      <div className="stack" aria-label="Your feedback" data-testid="feedback-saved" data-rating={saved.data.rating}>
        <div className="row">
          <span className="muted">You rated this answer</span>
          <span className={`badge ${saved.data.rating === "up" ? "ok" : "err"}`} data-testid="feedback-rating">{RATING_LABEL[saved.data.rating]}</span>
          {justSaved && <span className="muted" role="status">Thanks — feedback saved.</span>}
          <span className="grow" />
          <button type="button" onClick={() => (setEditing(true), setJustSaved(false))}>Change</button>
          <button type="button" onClick={() => clear.mutate(undefined, { onSuccess: () => setJustSaved(false) })} disabled={clear.isPending}>Clear</button>
        </div>
        {saved.data.comment && <p className="muted" data-testid="feedback-comment">“{saved.data.comment}”</p>}
        {saved.data.expected_answer && <p className="muted" data-testid="feedback-expected">Expected: {saved.data.expected_answer}</p>}
        {clear.error && <ErrorView error={clear.error} />}
      </div>
    );
  }
  return (
    <FeedbackForm key={saved.data?.updated_at ?? "new"} runId={runId} initial={saved.data ?? null}
      onSaved={() => (setEditing(false), setJustSaved(true))} onCancel={saved.data ? () => setEditing(false) : undefined} />
  );
}

function FeedbackForm({ runId, initial, onSaved, onCancel }: {
  runId: string;
  initial: SavedFeedback | null;
  onSaved: () => void;
  onCancel?: () => void;
}) {
  const { save } = useFeedbackMutations(runId);
  const [rating, setRating] = useState<Rating | null>(initial?.rating ?? null);
  const [comment, setComment] = useState(initial?.comment ?? "");
  const [expected, setExpected] = useState(initial?.expected_answer ?? "");
  const submit = () => save.mutate(
    { rating: rating!, comment: comment.trim() || null, expected_answer: expected.trim() || null },
    { onSuccess: onSaved },
  );
  return (
    <div className="stack" aria-label="Feedback">
      <div className="row">
        <span className="muted">Was this answer good?</span>
        <button aria-pressed={rating === "up"} onClick={() => setRating("up")} className={rating === "up" ? PRESSED : ""}><span aria-hidden="true">▲ </span>Good</button>
        <button aria-pressed={rating === "down"} onClick={() => setRating("down")} className={rating === "down" ? PRESSED : ""}><span aria-hidden="true">▼ </span>Bad</button>
      </div>
      {rating && (
        <form className="stack" onSubmit={(e) => (e.preventDefault(), submit())}>
          <div><label htmlFor={`fb-comment-${runId}`}>Comment (optional)</label>
            <input id={`fb-comment-${runId}`} value={comment} onChange={(e) => setComment(e.target.value)} /></div>
          <div><label htmlFor={`fb-expected-${runId}`}>Expected answer (optional)</label>
            <textarea id={`fb-expected-${runId}`} rows={2} value={expected} onChange={(e) => setExpected(e.target.value)}
              placeholder={rating === "down" ? "Your correction: it becomes the gold answer when this run is added to a dataset" : undefined} /></div>
          <div className="row">
            <button type="submit" className="primary" disabled={save.isPending}>{initial ? "Save changes" : "Send feedback"}</button>
            {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
          </div>
          {save.error && <ErrorView error={save.error} />}
        </form>
      )}
    </div>
  );
}
