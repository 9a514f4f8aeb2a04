// The user's saved rating of the run, shown in the run tree's header (the same query as the turn's feedback).
import { RATING_LABEL, useRunFeedback } from "../feedbackQueries";

export function FeedbackBadge({ runId }: { runId: string }) {
  const saved = useRunFeedback(runId);
  if (!saved.data) return null;
  const { rating, comment, expected_answer: expected } = saved.data;
  const detail = [comment && `“${comment}”`, expected && `Expected: ${expected}`].filter(Boolean).join(" · ");
  return (
    <span className={`badge ${rating === "up" ? "ok" : "err"}`} data-testid="tree-feedback" data-rating={rating}
      title={detail || undefined} aria-label={`You rated this run ${RATING_LABEL[rating]}${detail ? `: ${detail}` : ""}`}>
      Rated {RATING_LABEL[rating]}
    </span>
  );
}
