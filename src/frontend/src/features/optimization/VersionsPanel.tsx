// Saved program versions per module, which one is promoted, and rollback (withdraw the promoted version).
import { TableScroll } from "../../components/TableScroll";
import { ConfirmButton } from "../../components/Dialog";
import { Empty, ErrorView, Loading } from "../../components/States";
import { fmtScore, useOptimizationMutations, useVersions } from "./queries";

export function VersionsPanel() {
  const versions = useVersions();
  const { rollback } = useOptimizationMutations();
  const promotedModules = [...new Set(versions.data?.filter((v) => v.promoted).map((v) => v.module) ?? [])];
  return (
    <section className="panel stack" aria-labelledby="opt-versions">
      <h2 id="opt-versions" className="h2">Program versions</h2>
      {versions.isPending && <Loading label="Loading versions…" />}
      {versions.error && <ErrorView error={versions.error} retry={() => void versions.refetch()} />}
      {versions.data?.length === 0 && <Empty>No saved versions yet; a finished run saves one. Turns use the built-in programs.</Empty>}
      {versions.data && versions.data.length > 0 && (
        <TableScroll label="Program versions"><table aria-label="Program versions">
          <thead><tr><th>Version</th><th>Module</th><th>Optimized score</th><th>State</th><th>Created</th></tr></thead>
          <tbody>
            {versions.data.map((v) => {
              const scores = (v.manifest.scores ?? {}) as Record<string, unknown>;
              return (
                <tr key={v.id}>
                  <td><code>{v.version}</code></td>
                  <td><code>{v.module}</code></td>
                  <td>{fmtScore(scores.optimized)}</td>
                  <td>{v.promoted ? <span className="badge ok">promoted</span> : <span className="muted">saved</span>}</td>
                  <td>{new Date(v.created_at).toLocaleString()}</td>
                </tr>
              );
            })}
          </tbody>
        </table></TableScroll>
      )}
      {promotedModules.length > 0 && (
        <div className="row">
          {promotedModules.map((m) => (
            <ConfirmButton key={m} className="" disabled={rollback.isPending} title={`Roll back ${m}?`} confirm="Roll back" onConfirm={() => rollback.mutate(m)}
              description="New turns use the version promoted before this one (or the built-in program).">
              Roll back {m}
            </ConfirmButton>
          ))}
        </div>
      )}
      {rollback.error && <ErrorView error={rollback.error} />}
      {rollback.data && <p role="status">{rollback.data.module} now uses {rollback.data.promoted ? <code>{rollback.data.promoted.version}</code> : "the built-in program"}.</p>}
    </section>
  );
}
