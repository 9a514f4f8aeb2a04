// Your datasets: list, the first rows of the one you open, and building one from rated turns (feedback).
import { TableScroll } from "../../components/TableScroll";
import { useId, useState, type FormEvent } from "react";
import { Empty, ErrorView, Loading } from "../../components/States";
import { RowsTable } from "./DatasetPreview";
import { useDataset, useDatasets, useModules, useOptimizationMutations } from "./queries";

function DatasetRows({ id }: { id: string }) {
  const detail = useDataset(id);
  if (detail.isPending) return <Loading label="Loading rows…" />;
  if (detail.error) return <ErrorView error={detail.error} />;
  const columns = [...new Set(detail.data.rows.flatMap((r) => Object.keys(r)))];
  return <RowsTable rows={detail.data.rows} columns={columns} label={`Rows of ${detail.data.name}`} limit={10} />;
}

function FromFeedback() {
  const ids = useId();
  const modules = useModules();
  const { fromFeedback } = useOptimizationMutations();
  const [module, setModule] = useState("direct");
  const [name, setName] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    fromFeedback.mutate({ module, name: name.trim() }, { onSuccess: () => setName("") });
  };
  return (
    <details>
      <summary>Build a dataset from your rated answers</summary>
      <form className="row" aria-label="Dataset from feedback" onSubmit={submit} style={{ alignItems: "end", marginTop: 8 }}>
        <div>
          <label htmlFor={`${ids}-m`}>Module</label>
          <select id={`${ids}-m`} value={module} onChange={(e) => setModule(e.target.value)}>
            {modules.data?.map((m) => <option key={m.name} value={m.name}>{m.name}</option>)}
          </select>
        </div>
        <div className="grow">
          <label htmlFor={`${ids}-n`}>Name</label>
          <input id={`${ids}-n`} value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
        </div>
        <button type="submit" disabled={!name.trim() || fromFeedback.isPending}>Build from feedback</button>
      </form>
      {fromFeedback.error && <ErrorView error={fromFeedback.error} />}
      {fromFeedback.data && (
        <p role="status">Built “{fromFeedback.data.name}” with {fromFeedback.data.row_count} rows
          {Object.keys(fromFeedback.data.skipped ?? {}).length > 0 && <> (skipped: {Object.entries(fromFeedback.data.skipped ?? {}).map(([k, v]) => `${k} ${v}`).join(", ")})</>}.</p>
      )}
    </details>
  );
}

export function DatasetsPanel() {
  const datasets = useDatasets();
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section className="panel stack" aria-labelledby="opt-datasets">
      <h2 id="opt-datasets" className="h2">Datasets</h2>
      {datasets.isPending && <Loading label="Loading datasets…" />}
      {datasets.error && <ErrorView error={datasets.error} retry={() => void datasets.refetch()} />}
      {datasets.data?.length === 0 && <Empty>No datasets yet. Upload a JSONL or CSV file above, or build one from feedback.</Empty>}
      {datasets.data && datasets.data.length > 0 && (
        <TableScroll label="Datasets"><table aria-label="Datasets">
          <thead><tr><th>Name</th><th>Module</th><th>Rows</th><th>Created</th><th><span className="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {datasets.data.map((d) => (
              <tr key={d.id}>
                <td>{d.name}</td>
                <td><code>{d.module}</code></td>
                <td>{d.row_count}</td>
                <td>{new Date(d.created_at).toLocaleString()}</td>
                <td>
                  <button type="button" aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? null : d.id)}>
                    {open === d.id ? "Hide rows" : "Show rows"}<span className="sr-only"> of {d.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table></TableScroll>
      )}
      {open && <DatasetRows id={open} />}
      <FromFeedback />
    </section>
  );
}
