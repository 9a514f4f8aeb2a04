// A profile's extra HTTP headers (a gateway's X-Org, a token...). They are secrets like the key: the server
// returns their names only, so a stored header shows as "set" and its value field stays empty unless the user
// types a new one. The PATCH sends the whole set: a value replaces, null keeps the stored value, a header left
// out is removed.
import type { Schemas } from "../../lib/api/client";

export type HeaderRow = { id: number; name: string; value: string; stored: boolean };

let nextId = 0;
export const headerRow = (name = "", stored = false): HeaderRow => ({ id: nextId++, name, value: "", stored });
export const storedRows = (names: string[] | undefined): HeaderRow[] => (names ?? []).map((n) => headerRow(n, true));

/** For a new profile: the headers with a name and a value. */
export function newHeaders(rows: HeaderRow[]): Record<string, string> {
  return Object.fromEntries(rows.filter((r) => r.name.trim() && r.value).map((r) => [r.name.trim(), r.value]));
}

/** For an edit: the whole set when anything changed (null keeps a stored value), else undefined (not sent). */
export function headerChanges(stored: string[], rows: HeaderRow[]): Schemas["ProfileUpdate"]["extra_headers"] | undefined {
  const named = rows.filter((r) => r.name.trim());
  const kept = named.filter((r) => r.stored && !r.value).map((r) => r.name);
  const unchanged = kept.length === stored.length && named.length === stored.length;
  if (unchanged) return undefined;
  if (named.length === 0) return null;
  return Object.fromEntries(named.map((r) => [r.name.trim(), r.stored && !r.value ? null : r.value]));
}

export function ProfileHeaders({ prefix, rows, onChange }: { prefix: string; rows: HeaderRow[]; onChange: (rows: HeaderRow[]) => void }) {
  const set = (id: number, patch: Partial<HeaderRow>) => onChange(rows.map((r) => (r.id === id ? { ...r, ...patch } : r)));
  return (
    <fieldset className="stack" style={{ border: 0, padding: 0, margin: 0, gap: 4 }}>
      <legend style={{ fontSize: 13, padding: 0 }}>HTTP headers (values are stored encrypted and never shown)</legend>
      {rows.length === 0 && <p className="muted small" style={{ margin: 0 }}>No headers.</p>}
      <ul aria-label="Headers" className="stack" style={{ listStyle: "none", padding: 0, margin: 0, gap: 4 }}>
        {rows.map((r) => (
          <li key={r.id} className="row" style={{ alignItems: "center" }}>
            {r.stored ? (
              <span style={{ minWidth: 160 }}>
                <code>{r.name}</code> <span className="badge ok" title="a value is stored">set</span>
              </span>
            ) : (
              <input aria-label="Header name" placeholder="X-Header-Name" value={r.name} style={{ maxWidth: 200 }}
                onChange={(e) => set(r.id, { name: e.target.value })} />
            )}
            <input id={`${prefix}-h-${r.id}`} type="password" autoComplete="off" className="grow"
              aria-label={r.stored ? `New value for ${r.name} (empty keeps it)` : `Value of ${r.name || "the new header"}`}
              placeholder={r.stored ? "stored; type to replace" : "value"} required={!r.stored && !!r.name.trim()}
              value={r.value} onChange={(e) => set(r.id, { value: e.target.value })} />
            <button type="button" onClick={() => onChange(rows.filter((x) => x.id !== r.id))} aria-label={`Remove header ${r.name || "(new)"}`}>Remove</button>
          </li>
        ))}
      </ul>
      <div><button type="button" onClick={() => onChange([...rows, headerRow()])}>Add header</button></div>
    </fieldset>
  );
}
