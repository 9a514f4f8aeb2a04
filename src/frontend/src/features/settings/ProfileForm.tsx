// Create or edit an LLM profile. The API key and header values are sent once and stored encrypted; only a mask
// and the header names come back. When editing, only the fields the user changed are sent; an empty key field
// keeps the stored key, an empty value keeps a stored header.
import { useState, type FormEvent } from "react";
import { ErrorView } from "../../components/States";
import type { Schemas } from "../../lib/api/client";
import { useProfileMutations } from "./profileQueries";
import { headerChanges, newHeaders, ProfileHeaders, storedRows, type HeaderRow } from "./ProfileHeaders";

type Profile = Schemas["ProfileOut"];

/** The PATCH body for an edit: changed fields only; the key only when replaced or removed; the headers' whole
 * set only when one was added, replaced or removed. */
export function profileChanges(p: Profile, next: { name: string; model: string; apiBase: string; apiKey: string; removeKey: boolean; headers?: HeaderRow[] }): Schemas["ProfileUpdate"] {
  const body: Schemas["ProfileUpdate"] = {};
  if (next.name.trim() !== p.name) body.name = next.name.trim();
  if (next.model.trim() !== p.model) body.model = next.model.trim();
  if ((next.apiBase.trim() || null) !== (p.api_base ?? null)) body.api_base = next.apiBase.trim() || null;
  if (next.removeKey) body.api_key = null;
  else if (next.apiKey) body.api_key = next.apiKey;
  const headers = next.headers && headerChanges(p.extra_header_names ?? [], next.headers);
  if (headers !== undefined) body.extra_headers = headers;
  return body;
}

export function ProfileForm({ editing, onDone }: { editing?: Profile; onDone?: () => void }) {
  const { create, update } = useProfileMutations();
  const [name, setName] = useState(editing?.name ?? "");
  const [model, setModel] = useState(editing?.model ?? "");
  const [apiBase, setApiBase] = useState(editing?.api_base ?? "");
  const [apiKey, setApiKey] = useState("");
  const [removeKey, setRemoveKey] = useState(false);
  const [headers, setHeaders] = useState<HeaderRow[]>(() => storedRows(editing?.extra_header_names));
  const prefix = editing ? `e-${editing.id}` : "p";
  const mutation = editing ? update : create;
  const changes = editing ? profileChanges(editing, { name, model, apiBase, apiKey, removeKey, headers }) : null;
  const retargeted = !!editing && (model.trim() !== editing.model || (apiBase.trim() || null) !== (editing.api_base ?? null));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (editing) {
      if (changes && Object.keys(changes).length) await update.mutateAsync({ id: editing.id, body: changes });
      onDone?.();
      return;
    }
    await create.mutateAsync({ name, model, engine: "auto", api_base: apiBase || null, api_key: apiKey || null, extra_headers: newHeaders(headers) });
    setName(""); setModel(""); setApiBase(""); setApiKey(""); setHeaders([]);
  };
  return (
    <form className="stack" onSubmit={(e) => void submit(e).catch(() => undefined)} aria-label={editing ? `Edit profile ${editing.name}` : "New LLM profile"}>
      {editing && <h3 style={{ fontSize: 14, margin: 0 }}>Edit {editing.name}</h3>}
      <div className="grid" style={{ display: "grid", gridTemplateColumns: "repeat(auto-fit, minmax(180px, 1fr))", gap: 8 }}>
        <div><label htmlFor={`${prefix}-name`}>Profile name</label><input id={`${prefix}-name`} required value={name} onChange={(e) => setName(e.target.value)} /></div>
        <div><label htmlFor={`${prefix}-model`}>Model (provider/model)</label><input id={`${prefix}-model`} required placeholder="openai/gpt-4o-mini" value={model} onChange={(e) => setModel(e.target.value)} /></div>
        <div><label htmlFor={`${prefix}-base`}>API base URL (optional)</label><input id={`${prefix}-base`} value={apiBase} onChange={(e) => setApiBase(e.target.value)} /></div>
        <div><label htmlFor={`${prefix}-key`}>{editing ? `API key (${editing.api_key_set ? `stored: ${editing.api_key_masked}; empty keeps it` : "none stored"})` : "API key (optional)"}</label>
          <input id={`${prefix}-key`} type="password" autoComplete="off" value={apiKey} disabled={removeKey} onChange={(e) => setApiKey(e.target.value)} />
          {editing?.api_key_set && <label className="!m-0 !inline-flex items-center gap-1 !text-[14px] !text-fg [&>input]:!w-auto"><input type="checkbox" checked={removeKey} onChange={(e) => setRemoveKey(e.target.checked)} /> remove the stored key</label>}
        </div>
      </div>
      <ProfileHeaders prefix={prefix} rows={headers} onChange={setHeaders} />
      {retargeted && !apiKey && editing?.api_key_set && (
        <p className="warn-text small" role="note">Changing the model or API base removes the stored key unless you enter a new one.</p>
      )}
      {retargeted && headers.some((h) => h.stored && !h.value) && (
        <p className="warn-text small" role="note">Changing the model or API base removes the stored header values unless you enter them again.</p>
      )}
      <div className="row">
        <button className="primary" type="submit" disabled={mutation.isPending || !name || !model || (!!changes && Object.keys(changes).length === 0)}>{editing ? "Save changes" : "Add profile"}</button>
        {editing && <button type="button" onClick={onDone}>Cancel</button>}
      </div>
      {mutation.error && <ErrorView error={mutation.error} />}
    </form>
  );
}
