// Volumes: browse the caller's workspace, open files, upload into memory/ and artifacts/, delete from them.
import { useState } from "react";
import { Empty, ErrorView, Loading } from "../components/States";
import { FileViewer } from "../features/volumes/FileViewer";
import { useVolumeFile, useVolumeTree } from "../features/volumes/queries";
import { Upload } from "../features/volumes/Upload";
import { VolumeTree } from "../features/volumes/VolumeTree";

export function VolumesPage() {
  const tree = useVolumeTree();
  const [path, setPath] = useState<string | null>(null);
  const file = useVolumeFile(path);
  return (
    <div className="page stack">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="m-0 grow text-[20px]">Workspace volume</h1>
        <button onClick={() => void tree.refetch()} disabled={tree.isFetching}>Refresh</button>
      </div>
      <div className="grid gap-3 md:grid-cols-[minmax(220px,320px)_minmax(0,1fr)]">
        <div className="panel min-w-0">
          {tree.data && <Upload entries={tree.data.entries} onUploaded={setPath} />}
          <nav aria-label="Files" className="relative min-w-0 overflow-x-auto">
            {tree.isPending && <Loading />}
            {tree.error && <ErrorView error={tree.error} retry={() => void tree.refetch()} />}
            {tree.data && tree.data.entries.length === 0 && <Empty>The workspace is empty. Runs create memory/, artifacts/ and buffers/.</Empty>}
            {tree.data && <VolumeTree entries={tree.data.entries} selected={path} onOpen={setPath} />}
            {tree.data?.truncated && <p className="muted">Listing truncated.</p>}
          </nav>
        </div>
        <div className="min-w-0">
          {!path && <Empty>Select a file to view it.</Empty>}
          {path && file.isPending && <Loading />}
          {file.error && <ErrorView error={file.error} />}
          {file.data && <FileViewer key={file.data.path} file={file.data} onDeleted={() => setPath(null)} />}
        </div>
      </div>
    </div>
  );
}
