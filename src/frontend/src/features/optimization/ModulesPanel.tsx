// The modules GEPA can optimize, with the dataset keys each needs (required, optional) and its metric.
import { TableScroll } from "../../components/TableScroll";
import { Empty, ErrorView, Loading } from "../../components/States";
import { useModules } from "./queries";

export function ModulesPanel() {
  const modules = useModules();
  return (
    <section className="panel stack" aria-labelledby="opt-modules">
      <h2 id="opt-modules" className="h2">Modules</h2>
      {modules.isPending && <Loading label="Loading modules…" />}
      {modules.error && <ErrorView error={modules.error} retry={() => void modules.refetch()} />}
      {modules.data?.length === 0 && <Empty>No optimizable modules are registered on this server.</Empty>}
      {modules.data && modules.data.length > 0 && (
        <TableScroll label="Optimizable modules"><table aria-label="Optimizable modules">
          <thead>
            <tr><th>Module</th><th>Required keys</th><th>Optional keys</th><th>Metric</th></tr>
          </thead>
          <tbody>
            {modules.data.map((m) => (
              <tr key={m.name}>
                <td>
                  <code>{m.name}</code> <span className="badge">{m.kind}</span>
                  <div className="muted small">{m.description}</div>
                </td>
                <td data-testid={`required-${m.name}`}>{m.required_keys.map((k) => <code key={k} className="mr-1 rounded border border-line bg-panel-2 px-1">{k}</code>)}</td>
                <td>{m.optional_keys.length ? m.optional_keys.map((k) => <code key={k} className="mr-1 rounded border border-line bg-panel-2 px-1">{k}</code>) : <span className="muted">none</span>}</td>
                <td><code>{m.metric}</code><div className="muted small">{m.metric_description}</div></td>
              </tr>
            ))}
          </tbody>
        </table></TableScroll>
      )}
    </section>
  );
}
