// Runtime settings (limits, default mode): the caller's overrides on top of the server's defaults. The bounds
// come from the server's own schema (/openapi.json), so the form cannot offer a value the API refuses; Save
// sends only the fields the user changed, and "Use default" removes an override.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { ErrorView, Loading } from "../../components/States";
import { api, call, type Schemas } from "../../lib/api/client";
import { refreshAfterWrite } from "../../lib/refresh";

type Values = Schemas["RuntimeValues"];
type Key = keyof Values;
const LIMITS: [Key, string][] = [
  ["max_iters", "Max RLM iterations"],
  ["max_llm_calls", "Max LM calls per turn"],
  ["max_depth", "Max child depth"],
  ["batch_concurrency", "Parallel sub-LM calls"],
  ["turn_timeout_s", "Turn timeout (s)"],
];

export interface Bounds {
  min?: number;
  max?: number;
}

/** min/max of each RuntimeOverrides field, read from the OpenAPI document the server publishes. */
export function boundsFrom(openapi: unknown): Partial<Record<Key, Bounds>> {
  const props = (openapi as { components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> } })
    ?.components?.schemas?.RuntimeOverrides?.properties ?? {};
  const out: Partial<Record<Key, Bounds>> = {};
  for (const [key, raw] of Object.entries(props)) {
    const spec = raw as { anyOf?: { minimum?: number; maximum?: number }[]; minimum?: number; maximum?: number };
    const numeric = spec.anyOf?.find((s) => s.minimum !== undefined || s.maximum !== undefined) ?? spec;
    if (numeric.minimum !== undefined || numeric.maximum !== undefined) out[key as Key] = { min: numeric.minimum, max: numeric.maximum };
  }
  return out;
}

/** The fields whose draft differs from what is in effect (only these are sent). */
export function changedFields(draft: Values, effective: Values): Partial<Values> {
  const out: Partial<Values> = {};
  for (const key of Object.keys(draft) as Key[]) if (draft[key] !== effective[key]) (out as Record<string, unknown>)[key] = draft[key];
  return out;
}

export function RuntimeSettings() {
  const client = useQueryClient();
  const current = useQuery({ queryKey: ["runtime", "settings"], queryFn: () => call(api.GET("/api/v1/runtime/settings")) });
  const schema = useQuery({
    queryKey: ["openapi"],
    staleTime: Infinity,
    queryFn: async () => {
      const res = await fetch("/openapi.json");
      return res.ok ? boundsFrom(await res.json()) : {};
    },
  });
  const [draft, setDraft] = useState<Values | null>(null);
  useEffect(() => setDraft(current.data?.effective ?? null), [current.data]);
  const save = useMutation({
    mutationFn: (body: Schemas["RuntimeOverrides"]) => call(api.PATCH("/api/v1/runtime/settings", { body })),
    onSuccess: () => refreshAfterWrite(client, { queryKey: ["runtime"] }),
  });
  const effective = current.data?.effective;
  const overrides = current.data?.overrides ?? {};
  const changes = draft && effective ? changedFields(draft, effective) : {};
  const dirty = Object.keys(changes).length > 0;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (dirty) save.mutate(changes as Schemas["RuntimeOverrides"]);
  };
  const reset = (key: Key) => save.mutate({ [key]: null } as Schemas["RuntimeOverrides"]);
  const bounds = schema.data ?? {};
  const Default = ({ k }: { k: Key }) =>
    k in overrides ? (
      <button type="button" className="link text-[12px]" onClick={() => reset(k)} aria-label={`Use default (${String(current.data?.defaults[k])}) for ${k}`}>
        use default ({String(current.data?.defaults[k])})
      </button>
    ) : <span className="muted text-[12px]">server default</span>;
  return (
    <section className="panel stack" aria-labelledby="rt-title">
      <h2 id="rt-title" style={{ fontSize: 16, margin: 0 }}>Runtime settings</h2>
      {current.isPending && <Loading />}
      {current.error && <ErrorView error={current.error} />}
      {draft && (
        <form className="stack" onSubmit={submit} aria-label="Runtime settings">
          <div style={{ display: "grid", gridTemplateColumns: "repeat(auto-fit, minmax(180px, 1fr))", gap: 8 }}>
            <div><label htmlFor="rt-mode">Default mode</label>
              <select id="rt-mode" value={draft.default_mode} onChange={(e) => setDraft({ ...draft, default_mode: e.target.value })}>
                {["auto", "direct", "tools", "rlm"].map((m) => <option key={m}>{m}</option>)}
              </select><Default k="default_mode" /></div>
            {LIMITS.map(([key, label]) => {
              const b = bounds[key] ?? {};
              const hint = b.min !== undefined || b.max !== undefined ? ` (${b.min ?? "…"}–${b.max ?? "…"})` : "";
              return (
                <div key={key}><label htmlFor={`rt-${key}`}>{label}{hint}</label>
                  <input id={`rt-${key}`} type="number" min={b.min} max={b.max} step={key === "turn_timeout_s" ? "any" : 1} value={draft[key] as number}
                    onChange={(e) => setDraft({ ...draft, [key]: Number(e.target.value) })} />
                  <Default k={key} /></div>
              );
            })}
          </div>
          <div className="row">
            <button className="primary" type="submit" disabled={save.isPending || !dirty}>Save{dirty ? ` ${Object.keys(changes).length} change${Object.keys(changes).length === 1 ? "" : "s"}` : ""}</button>
            {dirty && <button type="button" onClick={() => setDraft(effective ?? null)}>Discard</button>}
            {save.isSuccess && !dirty && <span role="status" className="muted">Saved.</span>}
          </div>
          {save.error && <ErrorView error={save.error} />}
        </form>
      )}
    </section>
  );
}
