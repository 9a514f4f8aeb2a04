// LLM profiles (test, delete, import from environment) and which profile each role uses.
import { TableScroll } from "../../components/TableScroll";
import { ConfirmButton } from "../../components/Dialog";
import { useState } from "react";
import { Empty, ErrorView, Loading } from "../../components/States";
import { Unavailable } from "../../components/Unavailable";
import { isMissingEndpoint } from "../../lib/api/errors";
import { ProfileForm } from "./ProfileForm";
import { useProfileMutations, useProfiles, useRoles } from "./profileQueries";

export function Profiles() {
  const profiles = useProfiles();
  const roles = useRoles();
  const { remove, test, importEnv, bind } = useProfileMutations();
  const [editing, setEditing] = useState<string | null>(null);
  if (profiles.error && isMissingEndpoint(profiles.error)) return <Unavailable feature="LLM profiles" endpoint="/api/v1/llm-profiles" />;
  const items = profiles.data?.items ?? [];
  return (
    <section className="panel stack" aria-labelledby="profiles-title">
      <div className="row">
        <h2 id="profiles-title" className="grow" style={{ fontSize: 16, margin: 0 }}>LLM profiles</h2>
        <button onClick={() => importEnv.mutate()} disabled={importEnv.isPending}>Import from environment</button>
      </div>
      {profiles.isPending && <Loading />}
      {profiles.error && <ErrorView error={profiles.error} retry={() => void profiles.refetch()} />}
      {profiles.data && items.length === 0 && <Empty>No profiles yet: the server uses its environment (DSPY_LM_MODEL). Add one below.</Empty>}
      {items.length > 0 && (
        <TableScroll label="LLM profiles"><table aria-label="LLM profiles">
          <thead><tr><th>Name</th><th>Model</th><th>Key</th><th>Headers</th><th>Roles</th><th><span className="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {items.map((p) => (
              <tr key={p.id}>
                <td>{p.name}</td><td><code>{p.model}</code>{p.api_base && <div className="muted">{p.api_base}</div>}</td>
                <td>{p.api_key_set ? p.api_key_masked : <span className="muted">none</span>}</td>
                <td>{p.extra_header_names.length ? p.extra_header_names.map((h) => <div key={h}><code>{h}</code> <span className="badge ok" title="a value is stored (never shown)">set</span></div>) : <span className="muted">none</span>}</td>
                <td>{p.roles.join(", ")}</td>
                <td><div className="row">
                  <button onClick={() => test.mutate(p.id)} aria-label={`Test ${p.name}`}>Test</button>
                  <button onClick={() => setEditing(p.id)} aria-label={`Edit ${p.name}`}>Edit</button>
                  <ConfirmButton label={`Delete ${p.name}`} title={`Delete profile ${p.name}?`} confirm="Delete" onConfirm={() => remove.mutate(p.id)}
                    description={p.roles.length ? `Its roles (${p.roles.join(", ")}) go back to the environment's model.` : "No role uses it."}>Delete</ConfirmButton>
                </div></td>
              </tr>
            ))}
          </tbody>
        </table></TableScroll>
      )}
      {test.data && (
        <p role="status" data-testid="profile-test">
          <span className={`badge ${test.data.ok ? "ok" : "err"}`}>{test.data.ok ? "ok" : "failed"}</span> {test.data.profile}: {test.data.model} · {test.data.latency_ms} ms
          {!test.data.ok && ` — ${test.data.error_message ?? ""} ${test.data.action ?? ""}`}
        </p>
      )}
      {[test.error, remove.error, importEnv.error, bind.error].filter(Boolean).map((e, i) => <ErrorView key={i} error={e} />)}
      {editing && items.find((p) => p.id === editing) ? (
        <ProfileForm key={editing} editing={items.find((p) => p.id === editing)} onDone={() => setEditing(null)} />
      ) : (
        <ProfileForm />
      )}
      <h3 style={{ fontSize: 14, margin: "8px 0 0" }}>Role bindings</h3>
      {roles.error && <ErrorView error={roles.error} />}
      {roles.data && (
        <TableScroll label="Role bindings"><table aria-label="Role bindings">
          <thead><tr><th>Role</th><th>Profile</th><th>Effective model</th></tr></thead>
          <tbody>
            {roles.data.items.map((r) => (
              <tr key={r.role}>
                <td>{r.role}</td>
                <td>
                  <select aria-label={`Profile for ${r.role}`} value={r.binding?.profile_id ?? ""} disabled={items.length === 0 && !r.binding}
                    onChange={(e) => bind.mutate({ [r.role]: e.target.value ? { profile_id: e.target.value } : null })}>
                    <option value="">(environment / fallback)</option>
                    {items.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
                  </select>
                </td>
                <td>{r.effective ? <><code>{r.effective.model}</code> <span className="muted">({r.effective.source})</span></> : <span className="badge err">{r.problem?.message ?? "unset"}</span>}</td>
              </tr>
            ))}
          </tbody>
        </table></TableScroll>
      )}
    </section>
  );
}
