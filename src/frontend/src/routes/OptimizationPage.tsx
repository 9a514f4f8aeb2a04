// Optimization (GEPA): modules, dataset upload and list, rated answers turned into dataset rows, start a run, live progress, history, results and
// report, compare two runs, promote and rollback. The open run / comparison lives in the URL (?run=, ?a=&b=)
// so it survives reloads and can be linked.
import { useQuery } from "@tanstack/react-query";
import { useSearchParams } from "react-router";
import { ErrorView, Loading } from "../components/States";
import { Unavailable } from "../components/Unavailable";
import { ComparePanel } from "../features/optimization/CompareView";
import { DatasetsPanel } from "../features/optimization/DatasetsPanel";
import { DatasetUpload } from "../features/optimization/DatasetUpload";
import { ModulesPanel } from "../features/optimization/ModulesPanel";
import { RatedRunsPanel } from "../features/optimization/RatedRunsPanel";
import { RunDetail } from "../features/optimization/RunDetail";
import { RunHistory } from "../features/optimization/RunHistory";
import { StartRun } from "../features/optimization/StartRun";
import { VersionsPanel } from "../features/optimization/VersionsPanel";
import { api, call } from "../lib/api/client";
import { isMissingEndpoint } from "../lib/api/errors";

function StatusBar() {
  const status = useQuery({ queryKey: ["optimization", "status"], retry: false, queryFn: () => call(api.GET("/api/v1/optimization/status")) });
  if (status.isPending) return <Loading />;
  if (status.error) return isMissingEndpoint(status.error) ? <Unavailable feature="Optimization" endpoint="/api/v1/optimization/status" /> : <ErrorView error={status.error} />;
  const s = status.data;
  return (
    <div className="row" aria-label="Optimization status">
      <span className={`badge ${s.gepa_available ? "ok" : "err"}`}>{s.gepa_available ? "GEPA available" : "GEPA not installed"}</span>
      <span>Modules <b>{s.registered_modules}</b></span>
      <span>Program versions <b>{s.program_versions}</b></span>
      <span>Promoted <b>{s.promoted_versions}</b></span>
      <span>Active runs <b>{s.active_runs}</b></span>
    </div>
  );
}

export function OptimizationPage() {
  const [params, setParams] = useSearchParams();
  const runId = params.get("run");
  const a = params.get("a");
  const b = params.get("b");
  const openRun = (id: string) => setParams({ run: id });
  const compare = (x: string, y: string) => setParams({ a: x, b: y });
  const close = () => setParams({});
  return (
    <div className="page stack">
      <h1 className="h1">Optimization</h1>
      <p className="muted">Improve a module's instructions offline with GEPA: upload examples, run, compare, and promote the result so new turns use it.</p>
      <StatusBar />
      <div className="grid grid-cols-[repeat(auto-fit,minmax(min(340px,100%),1fr))] items-start gap-3">
        <DatasetUpload />
        <StartRun onStarted={openRun} />
      </div>
      {runId && <RunDetail key={runId} runId={runId} onClose={close} />}
      {a && b && <ComparePanel a={a} b={b} onClose={close} onSwap={() => compare(b, a)} />}
      <RunHistory current={runId} onOpen={openRun} onCompare={compare} />
      <RatedRunsPanel />
      <div className="grid grid-cols-[repeat(auto-fit,minmax(min(340px,100%),1fr))] items-start gap-3">
        <DatasetsPanel />
        <VersionsPanel />
      </div>
      <ModulesPanel />
    </div>
  );
}
