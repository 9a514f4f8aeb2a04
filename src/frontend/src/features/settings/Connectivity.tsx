// Model and Daytona connectivity tests: each button runs a real check on the server and shows its verdict.
import { useMutation } from "@tanstack/react-query";
import { ErrorView } from "../../components/States";
import { api, call } from "../../lib/api/client";

export function Connectivity() {
  const lm = useMutation({ mutationFn: () => call(api.POST("/api/v1/runtime/tests/lm")) });
  const daytona = useMutation({ mutationFn: () => call(api.POST("/api/v1/runtime/tests/daytona")) });
  return (
    <section className="panel stack" aria-labelledby="conn-title">
      <h2 id="conn-title" style={{ fontSize: 16, margin: 0 }}>Connectivity</h2>
      <div className="row">
        <button onClick={() => lm.mutate()} disabled={lm.isPending}>{lm.isPending ? "Testing model…" : "Test model"}</button>
        {lm.data && (
          <span role="status" data-testid="lm-test">
            <span className={`badge ${lm.data.ok ? "ok" : "err"}`}>{lm.data.ok ? "ok" : "failed"}</span> {lm.data.model} · {lm.data.latency_ms} ms
            {!lm.data.ok && <> — {lm.data.error_message} {lm.data.action && <span className="muted">({lm.data.action})</span>}</>}
          </span>
        )}
      </div>
      {lm.error && <ErrorView error={lm.error} />}
      <div className="row">
        <button onClick={() => daytona.mutate()} disabled={daytona.isPending}>{daytona.isPending ? "Testing Daytona…" : "Test Daytona"}</button>
        {daytona.data && (
          <span role="status"><span className={`badge ${daytona.data.ok ? "ok" : "warn"}`}>{daytona.data.ok ? "ok" : daytona.data.configured ? "failed" : "not configured"}</span> {daytona.data.message}</span>
        )}
      </div>
      {daytona.data && daytona.data.steps.length > 0 && (
        <ul>
          {daytona.data.steps.map((s) => (
            <li key={s.name}><span className={`badge ${s.ok ? "ok" : "err"}`}>{s.ok ? "ok" : "fail"}</span> {s.name}: {s.detail} {s.action && <span className="muted">— {s.action}</span>}</li>
          ))}
        </ul>
      )}
      {daytona.error && <ErrorView error={daytona.error} />}
    </section>
  );
}
