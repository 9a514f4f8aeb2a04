// The task box: message, mode, attachments (picker or drop), and optional context (text, URLs, repo, paths,
// skills). Ctrl/Cmd+Enter sends.
import { useEffect, useState, type DragEvent, type FormEvent } from "react";
import { ErrorView } from "../../components/States";
import type { Schemas } from "../../lib/api/client";
import type { TurnFrame } from "../../lib/events/socket";
import { Attachments } from "./Attachments";
import { rememberMode, savedMode, type Mode } from "./mode";
import { uploadAttachment } from "./upload";

export type TurnRequest = Omit<TurnFrame, "session_id" | "idempotency_key">;

const split = (text: string) => text.split(/[\n,]+/).map((s) => s.trim()).filter(Boolean);

export function Composer({ sessionId, busy, onSend, restore = null }: {
  sessionId?: string;
  busy: boolean;
  onSend: (req: TurnRequest) => Promise<void>;
  /** A request whose run failed: put its task and context back so nothing must be re-entered. */
  restore?: TurnRequest | null;
}) {
  const [content, setContent] = useState("");
  const [mode, setModeState] = useState<Mode>(() => savedMode(sessionId));
  const setMode = (m: Mode) => {
    setModeState(m);
    rememberMode(sessionId, m);
  };
  const [files, setFiles] = useState<Schemas["AttachmentOut"][]>([]);
  const [sentFiles, setSentFiles] = useState<Schemas["AttachmentOut"][]>([]);
  const [uploading, setUploading] = useState(0);
  const [contextText, setContextText] = useState("");
  const [urls, setUrls] = useState("");
  const [repoUrl, setRepoUrl] = useState("");
  const [repoRef, setRepoRef] = useState("");
  const [paths, setPaths] = useState("");
  const [skills, setSkills] = useState("");
  const [dragging, setDragging] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    if (!restore) return;
    setContent((c) => c || restore.content);
    setContextText((c) => c || (restore.context_text ?? ""));
    setUrls((u) => u || (restore.urls ?? []).join("\n"));
    setRepoUrl((r) => r || (restore.repo_url ?? ""));
    setPaths((p) => p || (restore.context_paths ?? []).join(", "));
    setSkills((k) => k || (restore.skills ?? []).join(", "));
    setFiles((f) => (f.length ? f : sentFiles.filter((x) => restore.attachment_ids?.includes(x.id))));
    // sentFiles only matters at the moment a restore arrives
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [restore]);

  const addFiles = async (list: File[]) => {
    setError(null);
    setUploading((n) => n + list.length);
    for (const file of list) {
      try {
        const made = await uploadAttachment(file, sessionId);
        setFiles((prev) => [...prev, made]);
      } catch (e) {
        setError(e);
      } finally {
        setUploading((n) => n - 1);
      }
    }
  };

  const submit = async (e?: FormEvent) => {
    e?.preventDefault();
    if (!content.trim() || busy || uploading) return;
    setError(null);
    try {
      await onSend({
        content,
        execution_mode: mode,
        attachment_ids: files.map((f) => f.id),
        context_text: contextText.trim() || null,
        urls: split(urls),
        repo_url: repoUrl.trim() || null,
        repo_ref: repoUrl.trim() && repoRef.trim() ? repoRef.trim() : null,
        context_paths: split(paths),
        skills: split(skills),
      });
      setContent("");
      setSentFiles(files);
      setFiles([]);
      setContextText("");
    } catch (err) {
      setError(err);
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    if (e.dataTransfer.files.length) void addFiles(Array.from(e.dataTransfer.files));
  };

  return (
    <form className={`composer${dragging ? " dragging" : ""}`} onSubmit={submit} aria-label="Compose a task"
      onDragOver={(e) => (e.preventDefault(), setDragging(true))} onDragLeave={() => setDragging(false)} onDrop={onDrop}>
      {error !== null && <ErrorView error={error} />}
      <label htmlFor="task">Task <span className="muted task-hint">(Ctrl+Enter to run; drop files here to attach)</span></label>
      <textarea id="task" rows={3} value={content} placeholder="Ask anything, or describe a task…" onChange={(e) => setContent(e.target.value)}
        onKeyDown={(e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) void submit(); }} />
      <div className="row" style={{ marginTop: 6 }}>
        <label className="row" style={{ margin: 0 }} htmlFor="mode">Mode</label>
        <select id="mode" value={mode} onChange={(e) => setMode(e.target.value as Mode)} style={{ width: "auto" }}>
          <option value="auto">Auto (router decides)</option>
          <option value="direct">Direct answer</option>
          <option value="tools">Tools (ReAct)</option>
          <option value="rlm">RLM (sandboxed REPL)</option>
        </select>
        <Attachments items={files} uploading={uploading} onFiles={(l) => void addFiles(l)} onRemove={(id) => setFiles((f) => f.filter((x) => x.id !== id))} />
        <span className="grow" />
        <button className="primary" type="submit" disabled={!content.trim() || busy || uploading > 0}>Run ▶</button>
      </div>
      <details>
        <summary>Context<span className="task-hint">: pasted text, URLs, repository, workspace paths, skills</span></summary>
        <div className="grid">
          <div><label htmlFor="ctx-text">Pasted text</label><textarea id="ctx-text" rows={3} value={contextText} onChange={(e) => setContextText(e.target.value)} /></div>
          <div><label htmlFor="ctx-urls">URLs (one per line)</label><textarea id="ctx-urls" rows={3} value={urls} onChange={(e) => setUrls(e.target.value)} /></div>
          <div><label htmlFor="ctx-repo">Repository URL</label><input id="ctx-repo" value={repoUrl} onChange={(e) => setRepoUrl(e.target.value)} />
            <label htmlFor="ctx-ref">Branch, tag or commit</label><input id="ctx-ref" value={repoRef} disabled={!repoUrl.trim()} onChange={(e) => setRepoRef(e.target.value)} /></div>
          <div><label htmlFor="ctx-paths">Workspace paths (comma separated)</label><input id="ctx-paths" value={paths} onChange={(e) => setPaths(e.target.value)} />
            <label htmlFor="ctx-skills">Skills (comma separated)</label><input id="ctx-skills" value={skills} onChange={(e) => setSkills(e.target.value)} /></div>
        </div>
      </details>
    </form>
  );
}
