// Files the run saved, downloadable (through fetch, so the bearer token is sent).
import { useState } from "react";
import { download } from "../../lib/api/client";
import type { Timeline } from "../../lib/events/types";
import { formatBytes } from "../composer/Attachments";

export function Artifacts({ items }: { items: Timeline["artifacts"] }) {
  const [error, setError] = useState<string | null>(null);
  if (items.length === 0) return null;
  return (
    <section aria-label="Artifacts">
      <span className="step-label">Artifacts</span>
      <ul>
        {items.map((a) => (
          <li key={a.seq}>
            {a.artifact_id ? (
              <button className="link" onClick={() => download(`/api/v1/artifacts/${a.artifact_id}/content`, a.name).catch((e) => setError(String(e)))}>
                {a.name}
              </button>
            ) : (
              a.name
            )}{" "}
            <span className="muted">{formatBytes(a.size_bytes)} · {a.media_type}</span>
          </li>
        ))}
      </ul>
      {error && <p role="alert">{error}</p>}
    </section>
  );
}
