// Your rated answers (feedback), filtered by rating and mode: tick the ones you want and add them to a new
// dataset in one more click. Each row's expected output is your correction, else the answer when you rated it
// good; a bad rating without a correction cannot become a row (the server reports it as skipped).
import { useId, useState } from "react";
import { Link } from "react-router";
import { TableScroll } from "../../components/TableScroll";
import { Empty, ErrorView, Loading } from "../../components/States";
import { RATING_LABEL, useRatedRuns, type RatedRun, type Rating } from "../run/feedbackQueries";
import { useModules, useOptimizationMutations } from "./queries";

const PAGE = 50;
const MODES = ["direct", "tools", "rlm", "auto"];
const defaultName = () => `rated-${new Date().toISOString().slice(0, 19).replace(/[T:]/g, "-")}`;
const clip = (text: string, n = 140) => (text.length > n ? `${text.slice(0, n)}…` : text);

/** What the row's expected output will be (the server's rule, optimize/feedback.py), or null when none. */
export function goldOf(run: RatedRun): string | null {
  if (run.expected_answer?.trim()) return run.expected_answer.trim();
  return run.rating === "up" && run.answer.trim() ? run.answer.trim() : null;
}

export function RatedRunsPanel() {
  const ids = useId();
  const [rating, setRating] = useState<Rating | "">("");
  const [mode, setMode] = useState("");
  const [offset, setOffset] = useState(0);
  const [picked, setPicked] = useState<string[]>([]);
  const [module, setModule] = useState("direct");
  const [name, setName] = useState(defaultName);
  const rated = useRatedRuns({ rating: rating || undefined, mode: mode || undefined, limit: PAGE, offset });
  const modules = useModules();
  const { fromFeedback } = useOptimizationMutations();
  const items = rated.data?.items ?? [];
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id]));
  const allPicked = items.length > 0 && items.every((r) => picked.includes(r.run_id));
  const build = () => fromFeedback.mutate(
    { module, name: name.trim() || defaultName(), run_ids: picked },
    { onSuccess: () => (setPicked([]), setName(defaultName())) },
  );
  const filter = (apply: () => void) => (apply(), setOffset(0), setPicked([]));
  return (
    <section className="panel stack" aria-labelledby="opt-rated">
      <h2 id="opt-rated" className="h2">Rated answers</h2>
      <p className="muted small">Answers you rated in the workspace. Tick some and add them to a new dataset: the task is the input, the expected output is your correction, else the answer you rated good.</p>
      <div className="row" style={{ alignItems: "end" }}>
        <div><label htmlFor={`${ids}-r`}>Rating</label>
          <select id={`${ids}-r`} value={rating} onChange={(e) => filter(() => setRating(e.target.value as Rating | ""))}>
            <option value="">All</option><option value="up">Good</option><option value="down">Bad</option>
          </select></div>
        <div><label htmlFor={`${ids}-mode`}>Mode</label>
          <select id={`${ids}-mode`} value={mode} onChange={(e) => filter(() => setMode(e.target.value))}>
            <option value="">All</option>{MODES.map((m) => <option key={m} value={m}>{m}</option>)}
          </select></div>
        <span className="grow" />
        <div><label htmlFor={`${ids}-m`}>Dataset module</label>
          <select id={`${ids}-m`} value={module} onChange={(e) => setModule(e.target.value)}>
            {(modules.data ?? [{ name: "direct" }]).map((m) => <option key={m.name} value={m.name}>{m.name}</option>)}
          </select></div>
        <div><label htmlFor={`${ids}-n`}>Dataset name</label>
          <input id={`${ids}-n`} value={name} onChange={(e) => setName(e.target.value)} maxLength={255} /></div>
        <button type="button" className="primary" disabled={picked.length === 0 || fromFeedback.isPending} onClick={build}>
          Add {picked.length || ""} selected to a new dataset
        </button>
      </div>
      {fromFeedback.error && <ErrorView error={fromFeedback.error} />}
      {fromFeedback.data && (
        <p role="status">Built “{fromFeedback.data.name}” with {fromFeedback.data.row_count} {fromFeedback.data.row_count === 1 ? "row" : "rows"}
          {Object.keys(fromFeedback.data.skipped ?? {}).length > 0 && <> (skipped: {Object.entries(fromFeedback.data.skipped ?? {}).map(([k, v]) => `${k} ${v}`).join(", ")})</>}. Pick it under Start a run.</p>
      )}
      {rated.isPending && <Loading label="Loading rated answers…" />}
      {rated.error && <ErrorView error={rated.error} retry={() => void rated.refetch()} />}
      {rated.data?.total === 0 && <Empty>No rated answers{rating || mode ? " match these filters" : " yet: rate answers with ▲ Good or ▼ Bad under a turn"}.</Empty>}
      {items.length > 0 && (
        <TableScroll label="Rated answers table"><table aria-label="Rated answers">
          <thead><tr>
            <th><input type="checkbox" aria-label="Select all shown" checked={allPicked}
              onChange={() => setPicked(allPicked ? [] : items.map((r) => r.run_id))} /></th>
            <th>Task</th><th>Rating</th><th>Expected output</th><th>Comment</th><th>Mode</th><th>Rated</th><th><span className="sr-only">Open</span></th>
          </tr></thead>
          <tbody>
            {items.map((r) => {
              const gold = goldOf(r);
              return (
                <tr key={r.run_id} data-testid="rated-run" data-rating={r.rating}>
                  <td><input type="checkbox" aria-label={`Select “${clip(r.task, 60)}”`} checked={picked.includes(r.run_id)} onChange={() => toggle(r.run_id)} /></td>
                  <td>{clip(r.task)}</td>
                  <td><span className={`badge ${r.rating === "up" ? "ok" : "err"}`}>{RATING_LABEL[r.rating]}</span></td>
                  <td>{gold ? clip(gold) : <span className="warn-text">none: add a correction to use it</span>}</td>
                  <td className="muted">{r.comment ? clip(r.comment, 80) : "–"}</td>
                  <td><code>{r.execution_mode}</code></td>
                  <td>{new Date(r.updated_at).toLocaleString()}</td>
                  <td><Link to={`/app/workspace/${r.session_id}?run=${r.run_id}`}>Open<span className="sr-only"> the turn “{clip(r.task, 60)}”</span></Link></td>
                </tr>
              );
            })}
          </tbody>
        </table></TableScroll>
      )}
      {rated.data && rated.data.total > PAGE && (
        <div className="row">
          <span className="muted small">{offset + 1}–{Math.min(offset + PAGE, rated.data.total)} of {rated.data.total}</span>
          <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>Previous</button>
          <button type="button" disabled={offset + PAGE >= rated.data.total} onClick={() => setOffset(offset + PAGE)}>Next</button>
        </div>
      )}
    </section>
  );
}
