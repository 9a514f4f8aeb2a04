// Health: database, sandbox isolation level and backend (Daytona or local), model configuration.
import { TableScroll } from "../../components/TableScroll";
import { useQuery } from "@tanstack/react-query";
import { ErrorView, Loading } from "../../components/States";
import { api, call, type Schemas } from "../../lib/api/client";
import { RuntimeStatusTable } from "./RuntimeStatusTable";

async function readiness(): Promise<Schemas["Readiness"]> {
  const result = await api.GET("/ready");
  if (result.data) return result.data;
  if (result.response.status === 503 && result.error) return result.error as Schemas["Readiness"];
  await call(Promise.resolve(result));
  throw new Error("the server sent no readiness report");
}

export function Health() {
  const ready = useQuery({ queryKey: ["ready"], queryFn: readiness });
  const info = useQuery({ queryKey: ["info"], queryFn: () => call(api.GET("/api/v1/info")) });
  return (
    <section className="panel stack" aria-labelledby="health-title">
      <div className="row">
        <h2 id="health-title" className="grow" style={{ fontSize: 16, margin: 0 }}>Health</h2>
        <button onClick={() => { void ready.refetch(); void info.refetch(); }}>Recheck</button>
      </div>
      {(ready.isPending || info.isPending) && <Loading />}
      {ready.error && <ErrorView error={ready.error} />}
      {info.error && <ErrorView error={info.error} />}
      {info.data && (
        <TableScroll label="Server information"><table>
          <tbody>
            <tr><th scope="row">Version</th><td>{info.data.version}</td></tr>
            <tr><th scope="row">Database</th><td>{info.data.database}</td></tr>
            <tr><th scope="row">Sandbox backend</th><td>{info.data.sandbox_backend}</td></tr>
            <tr><th scope="row">Auth</th><td>{info.data.auth_mode}</td></tr>
            <tr><th scope="row">Model</th><td>{info.data.model.configured ? `${info.data.model.root ?? "?"} (delegate ${info.data.model.delegate ?? "same"})` : "not configured"}</td></tr>
            <tr><th scope="row">Default mode</th><td>{info.data.default_mode}</td></tr>
          </tbody>
        </table></TableScroll>
      )}
      <RuntimeStatusTable />
      {ready.data && (
        <TableScroll label="Readiness checks"><table aria-label="Readiness checks">
          <thead><tr><th>Check</th><th>Status</th><th>Detail</th></tr></thead>
          <tbody>
            {Object.entries(ready.data.checks).map(([name, check]) => (
              <tr key={name}>
                <td>{name}</td>
                <td><span className={`badge ${check.ok ? "ok" : "err"}`}>{check.ok ? "ok" : "not ready"}</span></td>
                <td>{check.detail}</td>
              </tr>
            ))}
          </tbody>
        </table></TableScroll>
      )}
    </section>
  );
}
