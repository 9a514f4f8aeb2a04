// One llm_query_batched call: prompts grouped with a progress bar; expand to see each prompt and response.
import type { SubCall } from "../../lib/events/types";

export function SubLmBatch({ size, calls }: { size: number; calls: SubCall[] }) {
  const done = calls.filter((c) => c.done).length;
  const failed = calls.filter((c) => c.done && !c.ok).length;
  const pct = size ? Math.round((done / size) * 100) : 0;
  return (
    <details>
      <summary>
        <span className="step-label">Sub-LM batch</span> {done}/{size} done{failed > 0 && <span className="badge err"> {failed} failed</span>}
        <div className="progress" role="progressbar" aria-label="Batch progress" aria-valuemin={0} aria-valuemax={size} aria-valuenow={done}>
          <div style={{ width: `${pct}%` }} />
        </div>
      </summary>
      <ol>
        {calls.map((c) => (
          <li key={c.callId}>
            <SubCallView call={c} />
          </li>
        ))}
      </ol>
    </details>
  );
}

export function SubCallView({ call }: { call: SubCall }) {
  return (
    <div>
      <span className="muted">{call.model}</span> {call.done ? (call.ok ? <span className="badge ok">{call.latencyMs} ms</span> : <span className="badge err">failed</span>) : <span className="badge">running</span>}
      <div className="muted">→ {call.prompt}</div>
      {call.done && <div>← {call.ok ? call.response : call.error}</div>}
    </div>
  );
}
