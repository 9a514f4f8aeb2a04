// Upload a file into memory/ or artifacts/ (or one of their folders). The size limit (the server's one upload
// limit, shared with chat attachments) shows before anything is sent, and a file over it is refused here. An
// existing file is never replaced silently: a name already in the folder (known from the tree, or the server's
// file_exists) turns the action into an explicit Replace. A name the user typed is kept when a file is chosen.
import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorLine } from "../../components/States";
import { api, call, type Schemas } from "../../lib/api/client";
import { ApiError } from "../../lib/api/errors";
import { formatBytes } from "../composer/Attachments";
import { useVolumeWrites, WRITABLE } from "./queries";

const NAME = /^[^/\\]+$/;
const MIB = 1024 * 1024;

export function Upload({ entries, onUploaded }: { entries: Schemas["VolumeEntry"][]; onUploaded: (path: string) => void }) {
  const { upload } = useVolumeWrites();
  const info = useQuery({ queryKey: ["info"], queryFn: () => call(api.GET("/api/v1/info")) });
  const limit = info.data?.upload_max_bytes ?? null;
  const folders = [...new Set([...WRITABLE, ...entries.filter((e) => e.type === "dir" && WRITABLE.some((t) => e.path.startsWith(`${t}/`))).map((e) => e.path)])].sort();
  const [folder, setFolder] = useState<string>(WRITABLE[0]);
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState("");
  const [typed, setTyped] = useState(false);
  const [inputKey, setInputKey] = useState(0);
  const trimmed = name.trim();
  const target = `${folder}/${trimmed}`;
  const code = upload.error instanceof ApiError ? upload.error.code : null;
  const clash = code === "file_exists" || entries.some((e) => e.type === "file" && e.path === target);
  const tooBig = !!file && limit !== null && file.size > limit;
  const valid = !!file && !tooBig && NAME.test(trimmed) && trimmed !== "." && trimmed !== "..";

  const send = (overwrite: boolean) => {
    if (!file || !valid) return;
    upload.mutate({ path: target, file, overwrite }, {
      onSuccess: (written) => {
        setFile(null);
        setName("");
        setTyped(false);
        setInputKey((k) => k + 1);
        onUploaded(written.path);
      },
    });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    send(clash);
  };
  const limitText = limit === null ? "…" : limit % MIB === 0 ? `${limit / MIB} MiB` : formatBytes(limit);

  return (
    <form className="mb-3 grid gap-2 border-b border-line pb-3" aria-label="Upload a file" onSubmit={submit}>
      <div className="grid grid-cols-[minmax(0,1fr)_minmax(0,1fr)] gap-2">
        <div>
          <label htmlFor="upload-folder">Into</label>
          <select id="upload-folder" value={folder} onChange={(e) => (setFolder(e.target.value), upload.reset())}>
            {folders.map((f) => <option key={f} value={f}>{f}/</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="upload-name">File name</label>
          <input id="upload-name" value={name} placeholder="notes.md" aria-invalid={!!name && !NAME.test(trimmed)}
            onChange={(e) => (setName(e.target.value), setTyped(e.target.value.trim() !== ""), upload.reset())} />
        </div>
      </div>
      <div>
        <label htmlFor="upload-file">File</label>
        <input key={inputKey} id="upload-file" type="file" className="!p-1" aria-describedby="upload-limit upload-status"
          onChange={(e) => {
            const f = e.target.files?.[0] ?? null;
            setFile(f);
            if (f && !typed) setName(f.name);
            upload.reset();
          }} />
        <p id="upload-limit" className="muted m-0 mt-0.5 text-[12px]" data-testid="upload-limit">Up to {limitText} per file, the same limit as chat attachments.</p>
      </div>
      <div id="upload-status" className="grid gap-1 text-[13px]" aria-live="polite">
        {tooBig && file && <p className="m-0 text-err" role="alert">{file.name} is {formatBytes(file.size)}: larger than the {limitText} limit.</p>}
        {clash && trimmed && <p className="m-0 warn-text" data-testid="upload-clash">{target} already exists. Replace it, or type another file name.</p>}
        {code === "payload_too_large" && <p className="m-0 text-err" role="alert">The file is larger than the {limitText} limit.</p>}
        {upload.error !== null && code !== "file_exists" && code !== "payload_too_large" && <ErrorLine error={upload.error} />}
      </div>
      <div className="flex flex-wrap items-center gap-2">
        <button type="submit" className={clash ? "danger" : "primary"} disabled={!valid || upload.isPending}>
          {upload.isPending ? "Uploading…" : clash && trimmed ? `Replace ${target}` : "Upload"}
        </button>
        <span className="muted text-[12px]">Only memory/ and artifacts/ take uploads; the rest is read-only.</span>
      </div>
    </form>
  );
}
