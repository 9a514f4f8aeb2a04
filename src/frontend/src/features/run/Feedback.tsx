// Thumbs up/down on a run, with an optional comment and the answer that was expected (feeds optimization).
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorView } from "../../components/States";
import { api, call } from "../../lib/api/client";

export function Feedback({ runId }: { runId: string }) {
  const [rating, setRating] = useState<"up" | "down" | null>(null);
  const [comment, setComment] = useState("");
  const [expected, setExpected] = useState("");
  const send = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/traces/feedback", {
        body: { run_id: runId, rating: rating!, comment: comment.trim() || null, expected_answer: expected.trim() || null },
      })),
  });
  if (send.isSuccess) return <p className="muted" role="status">Thanks — feedback saved.</p>;
  return (
    <div className="stack" aria-label="Feedback">
      <div className="row">
        <span className="muted">Was this answer good?</span>
        <button aria-pressed={rating === "up"} onClick={() => setRating("up")}><span aria-hidden="true">▲ </span>Good</button>
        <button aria-pressed={rating === "down"} onClick={() => setRating("down")}><span aria-hidden="true">▼ </span>Bad</button>
      </div>
      {rating && (
        <form className="stack" onSubmit={(e) => (e.preventDefault(), send.mutate())}>
          <div><label htmlFor={`fb-comment-${runId}`}>Comment (optional)</label>
            <input id={`fb-comment-${runId}`} value={comment} onChange={(e) => setComment(e.target.value)} /></div>
          <div><label htmlFor={`fb-expected-${runId}`}>Expected answer (optional)</label>
            <textarea id={`fb-expected-${runId}`} rows={2} value={expected} onChange={(e) => setExpected(e.target.value)} /></div>
          <div><button type="submit" className="primary" disabled={send.isPending}>Send feedback</button></div>
          {send.error && <ErrorView error={send.error} />}
        </form>
      )}
    </div>
  );
}
