// Upload a JSONL or CSV dataset: pick a file, it is read and checked in the browser (preview of the first
// rows, row problems), then POSTed; the server's own 422 row errors are shown the same way.
import { useId, useState, type FormEvent } from "react";
import { ErrorView } from "../../components/States";
import { ApiError } from "../../lib/api/errors";
import { parseDataset, rowErrorsOf, type ParsedDataset } from "./dataset";
import { RowErrors, RowsTable } from "./DatasetPreview";
import { useModules, useOptimizationMutations } from "./queries";

interface Picked {
  filename: string;
  content: string;
}

const stem = (filename: string) => filename.replace(/\.[^.]+$/, "");

export function DatasetUpload({ onUploaded }: { onUploaded?: (id: string) => void }) {
  const ids = useId();
  const modules = useModules();
  const { upload } = useOptimizationMutations();
  const [module, setModule] = useState("");
  const [name, setName] = useState("");
  const [file, setFile] = useState<Picked | null>(null);
  const [readError, setReadError] = useState<string | null>(null);
  const selected = modules.data?.find((m) => m.name === (module || modules.data?.[0]?.name));
  const parsed: ParsedDataset | null = file && selected ? parseDataset(file.content, file.filename, selected.required_keys) : null;
  const unit = parsed?.format === "csv" ? "row" : "line";
  const serverError = upload.error instanceof ApiError ? upload.error : null;
  const serverRows = rowErrorsOf(serverError?.details);

  async function pick(list: FileList | null) {
    const picked = list?.[0];
    upload.reset();
    setReadError(null);
    if (!picked) return setFile(null);
    try {
      setFile({ filename: picked.name, content: await picked.text() });
      if (!name) setName(stem(picked.name));
    } catch (cause) {
      setFile(null);
      setReadError(`cannot read ${picked.name}: ${String(cause)}`);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!file || !selected) return;
    upload.mutate(
      { module: selected.name, name: name.trim(), content: file.content, filename: file.filename },
      { onSuccess: (ds) => { setFile(null); setName(""); onUploaded?.(ds.id); } },
    );
  }

  return (
    <form className="panel stack" aria-label="Upload dataset" onSubmit={submit}>
      <h2 className="h2">Upload a dataset</h2>
      <div className="grid grid-cols-[repeat(auto-fit,minmax(160px,1fr))] gap-2">
        <div>
          <label htmlFor={`${ids}-module`}>Module</label>
          <select id={`${ids}-module`} value={selected?.name ?? ""} onChange={(e) => { setModule(e.target.value); upload.reset(); }} disabled={!modules.data?.length}>
            {modules.data?.map((m) => <option key={m.name} value={m.name}>{m.name}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor={`${ids}-name`}>Dataset name</label>
          <input id={`${ids}-name`} value={name} maxLength={255} required onChange={(e) => setName(e.target.value)} />
        </div>
        <div>
          <label htmlFor={`${ids}-file`}>File (JSONL or CSV)</label>
          <input id={`${ids}-file`} data-testid="dataset-file" type="file" accept=".jsonl,.ndjson,.json,.csv,text/csv,application/x-ndjson" onChange={(e) => void pick(e.target.files)} />
        </div>
      </div>
      {selected && (
        <p className="muted small">
          <code>{selected.name}</code> needs {selected.required_keys.map((k) => <code key={k} className="mr-1 rounded border border-line bg-panel-2 px-1">{k}</code>)}
          {selected.optional_keys.length > 0 && <> and may have {selected.optional_keys.map((k) => <code key={k} className="mr-1 rounded border border-line bg-panel-2 px-1">{k}</code>)}</>}
        </p>
      )}
      {readError && <div role="alert" className="state error">{readError}</div>}
      {parsed && (
        <section aria-label="Preview" className="stack">
          <div className="row">
            <strong>{file?.filename}</strong>
            <span className="badge">{parsed.format.toUpperCase()}</span>
            <span className="muted">{parsed.rows.length} {parsed.rows.length === 1 ? "row" : "rows"}</span>
          </div>
          <RowsTable rows={parsed.rows} columns={parsed.columns} label="Dataset preview" />
          {parsed.errors.length > 0 && (
            <div>
              <p className="muted small">Checked in the browser; the server will reject the file until these are fixed:</p>
              <RowErrors errors={parsed.errors} unit={unit} />
            </div>
          )}
        </section>
      )}
      {serverError && (
        <div aria-label="Rejected by the server">
          {serverRows.length > 0 ? (
            <>
              <ErrorView error={serverError} />
              <RowErrors errors={serverRows} unit={unit} total={Number(serverError.details?.total_errors ?? 0)} />
            </>
          ) : <ErrorView error={serverError} />}
        </div>
      )}
      {upload.error && !serverError && <ErrorView error={upload.error} />}
      {upload.isSuccess && <p role="status" className="ok-text">Uploaded “{upload.data.name}” ({upload.data.row_count} rows).</p>}
      <div className="row">
        <button className="primary" type="submit" disabled={!file || !selected || !name.trim() || upload.isPending || !parsed || parsed.errors.length > 0 || parsed.rows.length === 0}
          title={parsed && parsed.errors.length > 0 ? "Fix the rows listed above first" : undefined}>
          {upload.isPending ? "Uploading…" : "Upload dataset"}
        </button>
      </div>
    </form>
  );
}
