// Per-example results of a finished run as a real table: one column per input field and per expected field,
// then the baseline and optimized output (the expected fields, not a JSON blob), their scores and the change.
// A row opens the full baseline vs optimized outputs side by side with the metric's feedback.
import { Fragment, useState } from "react";
import { cellText } from "./dataset";
import { fmtDelta, fmtScore, type RunResults } from "./queries";

interface Side {
  output?: unknown;
  score?: number;
  feedback?: string;
}

const asRecord = (v: unknown): Record<string, unknown> | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

export function fieldKeys(values: unknown[]): string[] {
  const keys: string[] = [];
  for (const v of values) for (const k of Object.keys(asRecord(v) ?? {})) if (!keys.includes(k)) keys.push(k);
  return keys;
}

/** An output shown by the expected fields it answers (all of it when it has none of them). */
export function outputText(output: unknown, keys: string[], limit = 100): string {
  const rec = asRecord(output);
  if (!rec) return cellText(output, limit);
  const shown = keys.filter((k) => k in rec);
  if (!shown.length) return cellText(rec, limit);
  return shown.map((k) => (shown.length > 1 ? `${k}: ${cellText(rec[k], limit)}` : cellText(rec[k], limit))).join(" · ");
}

const full = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

export function RunResultsTable({ results }: { results: RunResults }) {
  const [open, setOpen] = useState<string | null>(null);
  if (results.examples.length === 0) return <p className="muted">This run recorded no per-example results.</p>;
  const inputKeys = fieldKeys(results.examples.map((e) => e.inputs));
  const expectedKeys = fieldKeys(results.examples.map((e) => e.expected));
  const cols = 5 + inputKeys.length + expectedKeys.length;
  return (
    <div className="relative min-w-0 overflow-x-auto">
      <table aria-label="Per-example results">
        <thead>
          <tr>
            <th>#</th>
            {inputKeys.map((k) => <th key={`i-${k}`} scope="col">{k}</th>)}
            {expectedKeys.map((k) => <th key={`e-${k}`} scope="col">expected {k}</th>)}
            <th scope="col">Baseline</th><th scope="col">Optimized</th><th scope="col">Change</th><th><span className="sr-only">Details</span></th>
          </tr>
        </thead>
        <tbody>
          {results.examples.map((ex) => {
            const id = String(ex.index);
            const base = (ex.baseline ?? {}) as Side;
            const after = (ex.optimized ?? null) as Side | null;
            const delta = after?.score !== undefined && base.score !== undefined ? after.score - base.score : null;
            const inputs = asRecord(ex.inputs) ?? {};
            const expected = asRecord(ex.expected) ?? {};
            return (
              <Fragment key={id}>
                <tr>
                  <td>{id}</td>
                  {inputKeys.map((k) => <td key={k}>{cellText(inputs[k], 100)}</td>)}
                  {expectedKeys.map((k) => <td key={k}>{cellText(expected[k], 80)}</td>)}
                  <td><b>{fmtScore(base.score)}</b> {outputText(base.output, expectedKeys)}</td>
                  <td>{after ? <><b>{fmtScore(after.score)}</b> {outputText(after.output, expectedKeys)}</> : <span className="muted">not evaluated</span>}</td>
                  <td className={delta === null ? "" : delta > 0 ? "ok-text" : delta < 0 ? "err-text" : "muted"}>{fmtDelta(delta)}</td>
                  <td><button type="button" aria-expanded={open === id} aria-label={`${open === id ? "Hide" : "Diff"}: compare outputs of example ${id}`} onClick={() => setOpen(open === id ? null : id)}>{open === id ? "Hide" : "Diff"}</button></td>
                </tr>
                {open === id && (
                  <tr className="bg-panel-2" data-testid="example-compare">
                    <td colSpan={cols}>
                      <div className="grid grid-cols-[repeat(auto-fit,minmax(min(340px,100%),1fr))] items-start gap-3">
                        <div><div className="muted small">Baseline · {fmtScore(base.score)}</div><pre>{full(base.output)}</pre>{base.feedback && <p className="muted small">{base.feedback}</p>}</div>
                        <div><div className="muted small">Optimized · {fmtScore(after?.score)}</div><pre>{after ? full(after.output) : "not evaluated"}</pre>{after?.feedback && <p className="muted small">{after.feedback}</p>}</div>
                      </div>
                    </td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
