// Create an LLM profile (the API key is sent once and stored encrypted; only a mask comes back).
import { useState, type FormEvent } from "react";
import { ErrorView } from "../../components/States";
import { useProfileMutations } from "./profileQueries";

export function ProfileForm() {
  const { create } = useProfileMutations();
  const [name, setName] = useState("");
  const [model, setModel] = useState("");
  const [apiBase, setApiBase] = useState("");
  const [apiKey, setApiKey] = useState("");
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    await create.mutateAsync({ name, model, engine: "auto", api_base: apiBase || null, api_key: apiKey || null });
    setName(""); setModel(""); setApiBase(""); setApiKey("");
  };
  return (
    <form className="stack" onSubmit={(e) => void submit(e).catch(() => undefined)} aria-label="New LLM profile">
      <div className="grid" style={{ display: "grid", gridTemplateColumns: "repeat(auto-fit, minmax(180px, 1fr))", gap: 8 }}>
        <div><label htmlFor="p-name">Profile name</label><input id="p-name" required value={name} onChange={(e) => setName(e.target.value)} /></div>
        <div><label htmlFor="p-model">Model (provider/model)</label><input id="p-model" required placeholder="openai/gpt-4o-mini" value={model} onChange={(e) => setModel(e.target.value)} /></div>
        <div><label htmlFor="p-base">API base URL (optional)</label><input id="p-base" value={apiBase} onChange={(e) => setApiBase(e.target.value)} /></div>
        <div><label htmlFor="p-key">API key (optional)</label><input id="p-key" type="password" autoComplete="off" value={apiKey} onChange={(e) => setApiKey(e.target.value)} /></div>
      </div>
      <div><button className="primary" type="submit" disabled={create.isPending || !name || !model}>Add profile</button></div>
      {create.error && <ErrorView error={create.error} />}
    </form>
  );
}
