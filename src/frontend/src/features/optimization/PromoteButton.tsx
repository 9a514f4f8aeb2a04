// Promote a run's version, after seeing its score beside the current version's on the same validation rows.
// A version that is not strictly better is promoted only with "Promote anyway" (the API's confirm=true).
import { useState } from "react";
import { Dialog } from "../../components/Dialog";
import { ErrorView, Loading } from "../../components/States";
import { fmtScore, usePromotionCheck, useOptimizationMutations, type OptRun } from "./queries";

export function PromoteButton({ run, promoted }: { run: OptRun; promoted: boolean }) {
  const [open, setOpen] = useState(false);
  const check = usePromotionCheck(run.id, open);
  const { promote } = useOptimizationMutations();
  const c = check.data;
  const version = run.program_version!;
  const act = (confirm: boolean) => promote.mutate({ id: run.id, confirm }, { onSuccess: () => setOpen(false) });
  return (
    <>
      <button type="button" className="primary" disabled={promoted || promote.isPending} onClick={() => { promote.reset(); setOpen(true); }}>
        {promoted ? `${version} is promoted` : `Promote ${version}`}
      </button>
      {promote.data && <p role="status" className="ok-text">{promote.data.version} is now used by new turns of <code>{promote.data.module}</code>.</p>}
      <Dialog open={open} onOpenChange={setOpen} title={`Promote ${version}?`} description="Both scored on this run's validation rows.">
        {check.isPending && <Loading label="Comparing with the current version…" />}
        {check.error && <ErrorView error={check.error} />}
        {c && (
          <div className="stack">
            <table className="table" aria-label="Promotion scores">
              <thead><tr><th scope="col">version</th><th scope="col">score ({c.rows} rows)</th></tr></thead>
              <tbody>
                <tr><td>{c.candidate_version} <span className="muted">(this run)</span></td><td data-testid="candidate-score">{fmtScore(c.candidate_score)}</td></tr>
                <tr><td>{c.current_version} <span className="muted">(current)</span></td><td data-testid="current-score">{c.current_score === null || c.current_score === undefined ? "not scored on these rows" : fmtScore(c.current_score)}</td></tr>
              </tbody>
            </table>
            {c.better || c.already_current
              ? <p className="ok-text">{c.already_current ? "It is already the current version." : `Better than ${c.current_version}.`}</p>
              : <p role="alert" className="warn-text">{c.current_score === null || c.current_score === undefined ? `Not known to be better: ${c.current_version} was not scored on these rows.` : `Not better than ${c.current_version}.`} New turns would run it anyway.</p>}
            {promote.error && <ErrorView error={promote.error} />}
            <div className="flex justify-end gap-2">
              <button type="button" autoFocus onClick={() => setOpen(false)}>Cancel</button>
              {c.better || c.already_current
                ? <button type="button" className="primary font-semibold" disabled={promote.isPending} onClick={() => act(false)}>Promote</button>
                : <button type="button" className="danger font-semibold" disabled={promote.isPending} onClick={() => act(true)}>Promote anyway</button>}
            </div>
          </div>
        )}
      </Dialog>
    </>
  );
}
