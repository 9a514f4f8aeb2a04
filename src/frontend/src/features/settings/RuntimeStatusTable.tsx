// The server's runtime status: database schema, sandbox isolation level, Daytona, the root model and where turns run.
import { TableScroll } from "../../components/TableScroll";
import { useQuery } from "@tanstack/react-query";
import { ErrorView } from "../../components/States";
import { api, call } from "../../lib/api/client";

const Badge = ({ ok, children }: { ok: boolean | null; children: string }) => (
  <span className={`badge ${ok === null ? "" : ok ? "ok" : "err"}`}>{children}</span>
);

export function RuntimeStatusTable() {
  const status = useQuery({ queryKey: ["runtime", "status"], queryFn: () => call(api.GET("/api/v1/runtime/status")) });
  if (status.error) return <ErrorView error={status.error} />;
  const s = status.data;
  if (!s) return null;
  return (
    <TableScroll label="Runtime status"><table aria-label="Runtime status">
      <tbody>
        <tr><th scope="row">Database</th><td><Badge ok={s.database.reachable && s.database.at_head}>{s.database.reachable ? (s.database.at_head ? "ok" : "needs upgrade") : "unreachable"}</Badge> {s.database.kind} {s.database.revision ?? ""} {s.database.error ?? ""}</td></tr>
        <tr><th scope="row">Sandbox</th><td data-testid="isolation"><Badge ok={s.sandbox.usable}>{s.sandbox.isolation}</Badge> {s.sandbox.backend} · {s.sandbox.live_sandboxes} live {s.sandbox.reason && <span className="muted">— {s.sandbox.reason}</span>}</td></tr>
        <tr><th scope="row">Daytona</th><td><Badge ok={s.daytona.configured ? s.daytona.reachable : null}>{s.daytona.configured ? (s.daytona.reachable ? "reachable" : "unreachable") : "not configured"}</Badge> {s.daytona.detail}</td></tr>
        <tr><th scope="row">Root model</th><td><Badge ok={s.root_model.configured}>{s.root_model.configured ? "configured" : "missing"}</Badge> {s.root_model.model ?? ""} {s.root_model.source && <span className="muted">({s.root_model.source})</span>} {s.root_model.problem ?? ""}</td></tr>
        <tr><th scope="row">Turns</th><td data-testid="turn-workers">{s.turn_workers > 0 ? `${s.turn_workers} worker process${s.turn_workers === 1 ? "" : "es"}` : "in the server's threads"}</td></tr>
        <tr><th scope="row">Active runs</th><td>{s.active_runs}</td></tr>
      </tbody>
    </table></TableScroll>
  );
}
