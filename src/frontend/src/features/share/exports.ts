// Session downloads through the authenticated API (a plain link cannot carry the bearer token): the server names
// the file (Content-Disposition); the fallback name only covers a proxy that drops the header.
import { rawFetch, saveBlob } from "../../lib/api/client";

export type ExportFormat = "html" | "markdown" | "json";

const EXTENSION: Record<ExportFormat, string> = { html: "html", markdown: "md", json: "json" };

/** The filename in a Content-Disposition header (quoted, bare or RFC 5987 `filename*=UTF-8''...`), if any. */
export function dispositionFilename(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*\s*=\s*[^']*'[^']*'([^;]+)/i.exec(header);
  if (extended) {
    try {
      return safeName(decodeURIComponent(extended[1].trim()));
    } catch {
      /* malformed escape: fall back to the plain parameter */
    }
  }
  const plain = /filename\s*=\s*("([^"]*)"|[^;]+)/i.exec(header);
  if (!plain) return null;
  return safeName((plain[2] ?? plain[1]).trim());
}

/** A name the browser may save as: no directory parts, no control characters. */
function safeName(name: string): string | null {
  // eslint-disable-next-line no-control-regex
  const base = name.split(/[\\/]/).pop()?.replace(/[\u0000-\u001f]/g, "").trim() ?? "";
  return base && base !== "." && base !== ".." ? base : null;
}

export function exportUrl(sessionId: string, format: ExportFormat): string {
  return `/api/v1/sessions/${encodeURIComponent(sessionId)}/export?format=${format}`;
}

export async function downloadExport(sessionId: string, format: ExportFormat): Promise<string> {
  const response = await rawFetch(exportUrl(sessionId, format));
  const name = dispositionFilename(response.headers.get("Content-Disposition")) ?? `fleet-session-${sessionId}.${EXTENSION[format]}`;
  saveBlob(await response.blob(), name);
  return name;
}
