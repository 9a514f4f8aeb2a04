// Runtime settings (limits, default mode): the caller's overrides on top of the server's defaults.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { ErrorView, Loading } from "../../components/States";
import { api, call, type Schemas } from "../../lib/api/client";

type Values = Schemas["RuntimeValues"];
const LIMITS: [keyof Values, string][] = [
  ["max_iters", "Max RLM iterations"],
  ["max_llm_calls", "Max LM calls per turn"],
  ["max_depth", "Max child depth"],
  ["batch_concurrency", "Parallel sub-LM calls"],
  ["turn_timeout_s", "Turn timeout (s)"],
];

export function RuntimeSettings() {
  const client = useQueryClient();
  const current = useQuery({ queryKey: ["runtime", "settings"], queryFn: () => call(api.GET("/api/v1/runtime/settings")) });
  const [draft, setDraft] = useState<Values | null>(null);
  useEffect(() => setDraft(current.data?.effective ?? null), [current.data]);
  const save = useMutation({
    mutationFn: (body: Schemas["RuntimeOverrides"]) => call(api.PATCH("/api/v1/runtime/settings", { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: ["runtime"] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (draft) save.mutate({ ...draft, default_mode: draft.default_mode as Schemas["RuntimeOverrides"]["default_mode"] });
  };
  return (
    <section className="panel stack" aria-labelledby="rt-title">
      <h2 id="rt-title" style={{ fontSize: 16, margin: 0 }}>Runtime settings</h2>
      {current.isPending && <Loading />}
      {current.error && <ErrorView error={current.error} />}
      {draft && (
        <form className="stack" onSubmit={submit}>
          <div style={{ display: "grid", gridTemplateColumns: "repeat(auto-fit, minmax(180px, 1fr))", gap: 8 }}>
            <div><label htmlFor="rt-mode">Default mode</label>
              <select id="rt-mode" value={draft.default_mode} onChange={(e) => setDraft({ ...draft, default_mode: e.target.value })}>
                {["auto", "direct", "tools", "rlm"].map((m) => <option key={m}>{m}</option>)}
              </select></div>
            {LIMITS.map(([key, label]) => (
              <div key={key}><label htmlFor={`rt-${key}`}>{label}</label>
                <input id={`rt-${key}`} type="number" min={key === "max_depth" ? 0 : 1} value={draft[key] as number}
                  onChange={(e) => setDraft({ ...draft, [key]: Number(e.target.value) })} /></div>
            ))}
          </div>
          <div className="row"><button className="primary" type="submit" disabled={save.isPending}>Save</button>{save.isSuccess && <span role="status" className="muted">Saved.</span>}</div>
          {save.error && <ErrorView error={save.error} />}
        </form>
      )}
    </section>
  );
}
