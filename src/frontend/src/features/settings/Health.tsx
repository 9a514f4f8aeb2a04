// Health, in one table: version and auth, the database (schema and readiness), the sandbox (isolation, backend,
// readiness), Daytona, the root model and where turns run. Each fact appears once; readiness checks the server
// adds later get their own rows.
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { ErrorView, Loading } from "../../components/States";
import { TableScroll } from "../../components/TableScroll";
import { api, call, type Schemas } from "../../lib/api/client";

async function readiness(): Promise<Schemas["Readiness"]> {
  const result = await api.GET("/ready");
  if (result.data) return result.data;
  if (result.response.status === 503 && result.error) return result.error as Schemas["Readiness"];
  await call(Promise.resolve(result));
  throw new Error("the server sent no readiness report");
}

const Badge = ({ ok, children }: { ok: boolean | null; children: string }) => (
  <span className={`badge ${ok === null ? "" : ok ? "ok" : "err"}`}>{children}</span>
);

const Row = ({ name, children, testId }: { name: string; children: ReactNode; testId?: string }) => (
  <tr><th scope="row">{name}</th><td data-testid={testId}>{children}</td></tr>
);

const SHOWN_CHECKS = new Set(["database", "sandbox"]);

export function Health() {
  const ready = useQuery({ queryKey: ["ready"], queryFn: readiness });
  const info = useQuery({ queryKey: ["info"], queryFn: () => call(api.GET("/api/v1/info")) });
  const status = useQuery({ queryKey: ["runtime", "status"], queryFn: () => call(api.GET("/api/v1/runtime/status")) });
  const recheck = () => { void ready.refetch(); void info.refetch(); void status.refetch(); };
  const checks = ready.data?.checks ?? {};
  const notReady = (name: string) => (checks[name] && !checks[name].ok ? <span className="err-text"> — not ready: {checks[name].detail}</span> : null);
  const i = info.data;
  const s = status.data;
  return (
    <section className="panel stack" aria-labelledby="health-title">
      <div className="row">
        <h2 id="health-title" className="grow" style={{ fontSize: 16, margin: 0 }}>Health</h2>
        <button onClick={recheck}>Recheck</button>
      </div>
      {(info.isPending || status.isPending) && <Loading />}
      {[ready.error, info.error, status.error].map((e, n) => e && <ErrorView key={n} error={e} />)}
      {i && s && (
        <TableScroll label="Server health"><table aria-label="Server health">
          <tbody>
            <Row name="Version">{i.version} · auth {i.auth_mode} · default mode {i.default_mode}</Row>
            <Row name="Database" testId="database">
              <Badge ok={s.database.reachable && s.database.at_head}>{s.database.reachable ? (s.database.at_head ? "ok" : "needs upgrade") : "unreachable"}</Badge>{" "}
              {s.database.kind} {s.database.revision ?? ""} {s.database.error ?? ""}{notReady("database")}
            </Row>
            <Row name="Sandbox" testId="isolation">
              <Badge ok={s.sandbox.usable}>{s.sandbox.isolation}</Badge> {s.sandbox.backend} · {s.sandbox.live_sandboxes} live{" "}
              {s.sandbox.reason && <span className="muted">— {s.sandbox.reason}</span>}{notReady("sandbox")}
            </Row>
            <Row name="Daytona">
              <Badge ok={s.daytona.configured ? s.daytona.reachable : null}>{s.daytona.configured ? (s.daytona.reachable ? "reachable" : "unreachable") : "not configured"}</Badge> {s.daytona.detail}
            </Row>
            <Row name="Model">
              <Badge ok={s.root_model.configured}>{s.root_model.configured ? "configured" : "missing"}</Badge> {s.root_model.model ?? ""}
              {i.model.delegate && i.model.delegate !== s.root_model.model && ` (delegate ${i.model.delegate})`}{" "}
              {s.root_model.source && <span className="muted">({s.root_model.source})</span>} {s.root_model.problem ?? ""}
            </Row>
            <Row name="Turns" testId="turn-workers">{s.turn_workers > 0 ? `${s.turn_workers} worker process${s.turn_workers === 1 ? "" : "es"}` : "in the server's threads"}</Row>
            <Row name="Active runs">{s.active_runs}</Row>
            {Object.entries(checks).filter(([name]) => !SHOWN_CHECKS.has(name)).map(([name, check]) => (
              <Row key={name} name={name}><Badge ok={check.ok}>{check.ok ? "ok" : "not ready"}</Badge> {check.detail}</Row>
            ))}
          </tbody>
        </table></TableScroll>
      )}
    </section>
  );
}
