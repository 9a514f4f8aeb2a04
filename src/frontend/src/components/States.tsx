// Loading, empty and error states, so every page says truthfully what is going on.
import type { ReactNode } from "react";
import { ApiError } from "../lib/api/errors";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="state" role="status" aria-live="polite">
      {label}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="state">{children}</div>;
}

export function ErrorView({ error, retry }: { error: unknown; retry?: () => void }) {
  const api = error instanceof ApiError ? error : null;
  const message = api?.message ?? (error instanceof Error ? error.message : String(error));
  return (
    <div className="state error" role="alert">
      <strong>{api ? `Error (${api.code})` : "Error"}:</strong> {message}
      {api?.action && <div className="muted">What to do: {api.action}</div>}
      {retry && (
        <div style={{ marginTop: 8 }}>
          <button onClick={retry}>Try again</button>
        </div>
      )}
    </div>
  );
}

/** A failed action as one line: the server's code and message (and what to do, when it says). */
export function ErrorLine({ error }: { error: unknown }) {
  const api = error instanceof ApiError ? error : null;
  const message = api?.message ?? (error instanceof Error ? error.message : String(error));
  return (
    <p className="m-0 text-[13px] text-err" role="alert" data-testid="error-line">
      {api ? `Error (${api.code}): ` : "Error: "}{message}{api?.action ? ` — ${api.action}` : ""}
    </p>
  );
}
