// Optimization (GEPA). Shows what this server offers today (status, modules) and says plainly which parts of
// the workflow (datasets, runs, compare, promote) its API does not expose yet.
import { useQuery } from "@tanstack/react-query";
import { ErrorView, Loading } from "../components/States";
import { Unavailable } from "../components/Unavailable";
import { api, call } from "../lib/api/client";
import { isMissingEndpoint } from "../lib/api/errors";

export function OptimizationPage() {
  const status = useQuery({ queryKey: ["optimization", "status"], retry: false, queryFn: () => call(api.GET("/api/v1/optimization/status")) });
  const s = status.data;
  return (
    <div className="page stack">
      <h1 style={{ fontSize: 20, margin: 0 }}>Optimization</h1>
      {status.isPending && <Loading />}
      {status.error && (isMissingEndpoint(status.error) ? <Unavailable feature="Optimization" endpoint="/api/v1/optimization/status" /> : <ErrorView error={status.error} />)}
      {s && (
        <section className="panel stack" aria-label="Optimization status">
          <div className="row">
            <span className={`badge ${s.gepa_available ? "ok" : "err"}`}>{s.gepa_available ? "GEPA available" : "GEPA not installed"}</span>
            <span>Program versions <b>{s.program_versions}</b></span>
            <span>Promoted <b>{s.promoted_versions}</b></span>
            <span>Active runs <b>{s.active_runs}</b></span>
          </div>
          <h2 style={{ fontSize: 16, margin: 0 }}>Modules</h2>
          {s.program_modules.length === 0 ? <p className="muted">No optimizable modules registered.</p> : (
            <ul>{s.program_modules.map((m) => <li key={m}><code>{m}</code></li>)}</ul>
          )}
        </section>
      )}
      {s && <Unavailable feature="Datasets, optimization runs, compare and promote" endpoint="/api/v1/optimization/runs" />}
    </div>
  );
}
