// Start a GEPA run: module, one of its datasets, and a budget (GEPA's auto level or an exact metric-call cap).
import { useId, useState, type FormEvent } from "react";
import { ErrorView } from "../../components/States";
import { useDatasets, useModules, useOptimizationMutations } from "./queries";

type Budget = "light" | "medium" | "heavy" | "calls";

export function StartRun({ onStarted }: { onStarted: (runId: string) => void }) {
  const ids = useId();
  const modules = useModules();
  const datasets = useDatasets();
  const { start } = useOptimizationMutations();
  const [module, setModule] = useState("");
  const [datasetId, setDatasetId] = useState("");
  const [budget, setBudget] = useState<Budget>("light");
  const [calls, setCalls] = useState(20);
  const moduleName = module || modules.data?.[0]?.name || "";
  const choices = datasets.data?.filter((d) => d.module === moduleName) ?? [];
  const dataset = choices.find((d) => d.id === datasetId) ?? choices[0];

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!dataset) return;
    start.mutate(
      {
        module: moduleName,
        dataset_id: dataset.id,
        auto: budget === "calls" ? null : budget,
        max_metric_calls: budget === "calls" ? calls : null,
        val_fraction: 0.3,
        seed: 0,
        threads: 1,
        reflection_minibatch_size: 3,
      },
      { onSuccess: (run) => onStarted(run.id) },
    );
  }

  return (
    <form className="panel stack" aria-label="Start a run" onSubmit={submit}>
      <h2 className="h2">Start a run</h2>
      <div className="grid grid-cols-[repeat(auto-fit,minmax(160px,1fr))] gap-2">
        <div>
          <label htmlFor={`${ids}-module`}>Module to optimize</label>
          <select id={`${ids}-module`} value={moduleName} onChange={(e) => { setModule(e.target.value); setDatasetId(""); }}>
            {modules.data?.map((m) => <option key={m.name} value={m.name}>{m.name}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor={`${ids}-dataset`}>Dataset</label>
          <select id={`${ids}-dataset`} value={dataset?.id ?? ""} onChange={(e) => setDatasetId(e.target.value)} disabled={choices.length === 0}>
            {choices.length === 0 && <option value="">No dataset for this module</option>}
            {choices.map((d) => <option key={d.id} value={d.id}>{d.name} ({d.row_count} rows)</option>)}
          </select>
        </div>
      </div>
      <fieldset className="flex flex-wrap items-center gap-2.5 rounded-md border border-line">
        <legend className="text-[12px] text-muted">Budget</legend>
        {(["light", "medium", "heavy"] as const).map((level) => (
          <label key={level} className="!m-0 !inline-flex items-center gap-1 !text-[14px] !text-fg [&>input]:!w-auto">
            <input type="radio" name={`${ids}-budget`} value={level} checked={budget === level} onChange={() => setBudget(level)} /> auto {level}
          </label>
        ))}
        <label className="!m-0 !inline-flex items-center gap-1 !text-[14px] !text-fg [&>input]:!w-auto">
          <input type="radio" name={`${ids}-budget`} value="calls" checked={budget === "calls"} onChange={() => setBudget("calls")} /> max metric calls
        </label>
        <label htmlFor={`${ids}-calls`} className="sr-only">Metric-call budget</label>
        <input id={`${ids}-calls`} type="number" min={1} step={1} value={calls} disabled={budget !== "calls"} style={{ width: 110 }}
          onChange={(e) => setCalls(Math.max(1, Number(e.target.value) || 1))} />
      </fieldset>
      <p className="muted small">Each metric call runs the program once with your root model; each iteration also makes one reflection call.</p>
      {start.error && <ErrorView error={start.error} />}
      <div className="row">
        <button className="primary" type="submit" disabled={!dataset || start.isPending}>{start.isPending ? "Starting…" : "Start optimization"}</button>
      </div>
    </form>
  );
}
