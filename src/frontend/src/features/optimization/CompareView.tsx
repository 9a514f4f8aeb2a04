// Two runs side by side: their validation scores, the overall delta (b - a), and each example's optimized
// score in both, with how many examples got better or worse.
import { TableScroll } from "../../components/TableScroll";
import { ErrorView, Loading } from "../../components/States";
import { fmtDelta, fmtScore, useCompare, type Compare } from "./queries";

interface RunSide {
  id?: string;
  module?: string;
  scores?: Record<string, unknown>;
}

function SideSummary({ label, side }: { label: string; side: RunSide }) {
  return (
    <div className="panel !bg-panel-2" aria-label={`Run ${label}`}>
      <div className="step-label">Run {label}</div>
      <div><code>{side.id}</code> <span className="muted">{side.module}</span></div>
      <div className="counter">
        <span>Baseline <b>{fmtScore(side.scores?.baseline)}</b></span>
        <span>Optimized <b>{fmtScore(side.scores?.optimized)}</b></span>
      </div>
    </div>
  );
}

const tone = (d: unknown) => (typeof d !== "number" ? "muted" : d > 0 ? "ok-text" : d < 0 ? "err-text" : "muted");

export function CompareView({ data }: { data: Compare }) {
  const a = data.a as RunSide;
  const b = data.b as RunSide;
  return (
    <div className="stack">
      {!data.same_module && <p role="note" className="warn-text">These runs optimized different modules ({a.module} vs {b.module}); scores are not directly comparable.</p>}
      <div className="grid grid-cols-[repeat(auto-fit,minmax(min(340px,100%),1fr))] items-start gap-3">
        <SideSummary label="A" side={a} />
        <SideSummary label="B" side={b} />
      </div>
      <div className="counter" aria-label="Comparison summary">
        <span>Delta (B − A) <b className={tone(data.delta)} data-testid="compare-delta">{fmtDelta(data.delta)}</b></span>
        <span>Better in B <b>{data.better}</b></span>
        <span>Worse in B <b>{data.worse}</b></span>
        <span>Same or missing <b>{data.examples.length - data.better - data.worse}</b></span>
      </div>
      {data.examples.length === 0 ? <p className="muted">Neither run recorded per-example results.</p> : (
        <TableScroll label="Per-example comparison"><table aria-label="Per-example comparison">
          <thead><tr><th>Example</th><th>A optimized</th><th>B optimized</th><th>Delta</th></tr></thead>
          <tbody>
            {data.examples.map((ex) => (
              <tr key={String(ex.index)}>
                <td>{String(ex.index)}</td>
                <td>{fmtScore(ex.a)}</td>
                <td>{fmtScore(ex.b)}</td>
                <td className={tone(ex.delta)}>{fmtDelta(ex.delta)}</td>
              </tr>
            ))}
          </tbody>
        </table></TableScroll>
      )}
    </div>
  );
}

export function ComparePanel({ a, b, onClose, onSwap }: { a: string; b: string; onClose: () => void; onSwap: () => void }) {
  const compare = useCompare(a, b);
  return (
    <section className="panel stack" aria-label="Compare runs">
      <div className="row">
        <h2 className="h2 grow">Compare runs</h2>
        <button type="button" onClick={onSwap}>Swap A and B</button>
        <button type="button" onClick={onClose} aria-label="Close comparison">Close</button>
      </div>
      {compare.isPending && <Loading label="Comparing…" />}
      {compare.error && <ErrorView error={compare.error} retry={() => void compare.refetch()} />}
      {compare.data && <CompareView data={compare.data} />}
    </section>
  );
}
