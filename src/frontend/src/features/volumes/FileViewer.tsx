// Shows a workspace file by kind: Markdown, JSON (pretty, highlighted), images, or plain text; with download,
// and delete (after a confirmation) for files under memory/ and artifacts/.
import { ConfirmButton } from "../../components/Dialog";
import { CodeBlock } from "../../components/Lazy";
import { Markdown } from "../../components/Lazy";
import { ErrorLine } from "../../components/States";
import { saveBlob, type Schemas } from "../../lib/api/client";
import { isWritable, useVolumeWrites } from "./queries";

const IMAGE_TYPES: Record<string, string> = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", svg: "image/svg+xml" };

export function fileKind(path: string): "markdown" | "json" | "image" | "text" {
  const ext = path.split(".").pop()?.toLowerCase() ?? "";
  if (ext === "md" || ext === "markdown") return "markdown";
  if (ext === "json" || ext === "jsonl") return "json";
  if (ext in IMAGE_TYPES) return "image";
  return "text";
}

function bytesOf(file: Schemas["VolumeFile"]): Uint8Array {
  if (file.encoding === "utf-8") return new TextEncoder().encode(file.content);
  return Uint8Array.from(atob(file.content), (c) => c.charCodeAt(0));
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function FileViewer({ file, onDeleted }: { file: Schemas["VolumeFile"]; onDeleted: () => void }) {
  const { remove } = useVolumeWrites();
  const kind = fileKind(file.path);
  const ext = file.path.split(".").pop()?.toLowerCase() ?? "";
  const name = file.path.split("/").pop() ?? "file";
  let body;
  if (kind === "image") {
    const data = file.encoding === "base64" ? file.content : btoa(unescape(encodeURIComponent(file.content)));
    body = <img src={`data:${IMAGE_TYPES[ext]};base64,${data}`} alt={name} style={{ maxWidth: "100%" }} />;
  } else if (file.encoding === "base64") {
    body = <p className="muted">Binary file ({file.size} bytes): download it to open.</p>;
  } else if (kind === "markdown") {
    body = <Markdown text={file.content} />;
  } else if (kind === "json") {
    body = <CodeBlock code={ext === "json" ? prettyJson(file.content) : file.content} language="json" />;
  } else {
    body = <pre>{file.content}</pre>;
  }
  return (
    <article className="panel stack min-w-0" aria-label={`File ${file.path}`}>
      <div className="flex flex-wrap items-center gap-2">
        <strong className="min-w-0 grow break-all">{file.path}</strong>
        <span className="muted">{file.size.toLocaleString()} bytes</span>
        {!isWritable(file.path) && <span className="badge">read-only</span>}
        <button onClick={() => saveBlob(new Blob([bytesOf(file) as BlobPart]), name)}>Download</button>
        {isWritable(file.path) && (
          <ConfirmButton title={`Delete ${file.path}?`} confirm="Delete" disabled={remove.isPending}
            description="The file is removed from the workspace for every session of it. This cannot be undone."
            onConfirm={() => remove.mutate(file.path, { onSuccess: onDeleted })}>
            {remove.isPending ? "Deleting…" : "Delete"}
          </ConfirmButton>
        )}
      </div>
      {remove.error && <ErrorLine error={remove.error} />}
      {file.truncated && <p className="muted" role="note">Showing the start of the file only (it is larger than the viewer limit).</p>}
      {body}
    </article>
  );
}
