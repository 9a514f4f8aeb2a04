// Upload a file into memory/ or artifacts/ (or one of their folders). An existing file is never replaced
// silently: the server answers file_exists and the form offers Replace.
import { useState, type FormEvent } from "react";
import { ErrorLine } from "../../components/States";
import { ApiError } from "../../lib/api/errors";
import type { Schemas } from "../../lib/api/client";
import { useVolumeWrites, WRITABLE } from "./queries";

const NAME = /^[^/\\]+$/;

export function Upload({ entries, onUploaded }: { entries: Schemas["VolumeEntry"][]; onUploaded: (path: string) => void }) {
  const { upload } = useVolumeWrites();
  const folders = [...new Set([...WRITABLE, ...entries.filter((e) => e.type === "dir" && WRITABLE.some((t) => e.path.startsWith(`${t}/`))).map((e) => e.path)])].sort();
  const [folder, setFolder] = useState<string>(WRITABLE[0]);
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState("");
  const [inputKey, setInputKey] = useState(0);
  const target = `${folder}/${name.trim()}`;
  const exists = upload.error instanceof ApiError && upload.error.code === "file_exists";
  const valid = !!file && NAME.test(name.trim()) && name.trim() !== "." && name.trim() !== "..";

  const send = (overwrite: boolean) => {
    if (!file || !valid) return;
    upload.mutate({ path: target, file, overwrite }, {
      onSuccess: (written) => {
        setFile(null);
        setName("");
        setInputKey((k) => k + 1);
        onUploaded(written.path);
      },
    });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    send(false);
  };

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
          <input id="upload-name" value={name} onChange={(e) => (setName(e.target.value), upload.reset())} placeholder="notes.md" aria-invalid={!!name && !valid} />
        </div>
      </div>
      <div>
        <label htmlFor="upload-file">File</label>
        <input key={inputKey} id="upload-file" type="file" className="!p-1"
          onChange={(e) => {
            const f = e.target.files?.[0] ?? null;
            setFile(f);
            if (f) setName(f.name);
            upload.reset();
          }} />
      </div>
      <div className="flex flex-wrap items-center gap-2">
        <button type="submit" className="primary" disabled={!valid || upload.isPending}>{upload.isPending ? "Uploading…" : "Upload"}</button>
        {exists && <button type="button" className="danger" onClick={() => send(true)} disabled={upload.isPending}>Replace {target}</button>}
        <span className="muted text-[12px]">Only memory/ and artifacts/ take uploads; the rest is read-only.</span>
      </div>
      {upload.error && <ErrorLine error={upload.error} />}
    </form>
  );
}
