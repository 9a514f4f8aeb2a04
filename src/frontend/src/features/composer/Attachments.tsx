// File picker + chips of uploaded attachments (drag-and-drop is handled by the composer around it).
import { useRef } from "react";
import type { Schemas } from "../../lib/api/client";

export function Attachments({
  items,
  uploading,
  onFiles,
  onRemove,
}: {
  items: Schemas["AttachmentOut"][];
  uploading: number;
  onFiles: (files: File[]) => void;
  onRemove: (id: string) => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <div className="row">
      <button type="button" onClick={() => input.current?.click()}>+ Attach<span className="phone-hide"> files</span></button>
      <input ref={input} type="file" multiple hidden aria-label="Attach files" data-testid="file-input"
        onChange={(e) => {
          onFiles(Array.from(e.target.files ?? []));
          e.target.value = "";
        }} />
      <div className="chips" role="group" aria-label="Attachments">
        {items.map((a) => (
          <span className="chip" key={a.id}>
            {a.name} <span className="muted">{formatBytes(a.size)}</span>
            <button type="button" onClick={() => onRemove(a.id)} aria-label={`Remove ${a.name}`}>✕</button>
          </span>
        ))}
        {uploading > 0 && <span className="chip muted" role="status">uploading {uploading}…</span>}
      </div>
    </div>
  );
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
