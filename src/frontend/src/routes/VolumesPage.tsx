// Volumes: browse the caller's workspace and open files.
import { useState } from "react";
import { Empty, ErrorView, Loading } from "../components/States";
import { FileViewer } from "../features/volumes/FileViewer";
import { useVolumeFile, useVolumeTree } from "../features/volumes/queries";
import { VolumeTree } from "../features/volumes/VolumeTree";

export function VolumesPage() {
  const tree = useVolumeTree();
  const [path, setPath] = useState<string | null>(null);
  const file = useVolumeFile(path);
  return (
    <div className="page stack">
      <div className="row">
        <h1 className="grow" style={{ fontSize: 20, margin: 0 }}>Workspace volume</h1>
        <button onClick={() => void tree.refetch()} disabled={tree.isFetching}>Refresh</button>
      </div>
      <div className="two-pane">
        <nav className="panel" aria-label="Files">
          {tree.isPending && <Loading />}
          {tree.error && <ErrorView error={tree.error} retry={() => void tree.refetch()} />}
          {tree.data && tree.data.entries.length === 0 && <Empty>The workspace is empty. Runs create memory/, artifacts/ and buffers/.</Empty>}
          {tree.data && <VolumeTree entries={tree.data.entries} selected={path} onOpen={setPath} />}
          {tree.data?.truncated && <p className="muted">Listing truncated.</p>}
        </nav>
        <div>
          {!path && <Empty>Select a file to view it.</Empty>}
          {path && file.isPending && <Loading />}
          {file.error && <ErrorView error={file.error} />}
          {file.data && <FileViewer file={file.data} />}
        </div>
      </div>
    </div>
  );
}
