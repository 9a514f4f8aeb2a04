// Per-example results of a finished run: inputs, expected, baseline vs optimized output and score, feedback.
import { cellText } from "./dataset";
import { fmtDelta, fmtScore, type RunResults } from "./queries";

interface Side {
  output?: unknown;
  score?: number;
  feedback?: string;
}

export function RunResultsTable({ results }: { results: RunResults }) {
  if (results.examples.length === 0) return <p className="muted">This run recorded no per-example results.</p>;
  return (
    <div className="table-scroll">
      <table aria-label="Per-example results">
        <thead>
          <tr><th>#</th><th>Inputs</th><th>Expected</th><th>Baseline</th><th>Optimized</th><th>Change</th></tr>
        </thead>
        <tbody>
          {results.examples.map((ex) => {
            const base = (ex.baseline ?? {}) as Side;
            const after = (ex.optimized ?? null) as Side | null;
            const delta = after?.score !== undefined && base.score !== undefined ? after.score - base.score : null;
            return (
              <tr key={String(ex.index)}>
                <td>{String(ex.index)}</td>
                <td>{cellText(ex.inputs, 120)}</td>
                <td>{cellText(ex.expected, 80)}</td>
                <td><b>{fmtScore(base.score)}</b> {cellText(base.output, 100)}{base.feedback && <div className="muted small">{cellText(base.feedback, 140)}</div>}</td>
                <td>{after ? <><b>{fmtScore(after.score)}</b> {cellText(after.output, 100)}{after.feedback && <div className="muted small">{cellText(after.feedback, 140)}</div>}</> : <span className="muted">not evaluated</span>}</td>
                <td className={delta === null ? "" : delta > 0 ? "ok-text" : delta < 0 ? "err-text" : "muted"}>{fmtDelta(delta)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
