// Memory tab: the workspace's MEMORIES.md (shared by every session of the workspace, forks included).
import { Markdown } from "../../components/Lazy";
import { Empty, ErrorView, Loading } from "../../components/States";
import { ApiError } from "../../lib/api/errors";
import { useVolumeFile } from "../volumes/queries";
import { MEMORIES_PATH } from "./queries";

export function MemoryTab() {
  const file = useVolumeFile(MEMORIES_PATH);
  if (file.isPending) return <Loading />;
  if (file.error instanceof ApiError && file.error.status === 404)
    return <Empty>No MEMORIES.md yet: a run that saves notes to memory/ creates it.</Empty>;
  if (file.error) return <ErrorView error={file.error} retry={() => void file.refetch()} />;
  return (
    <article aria-label="MEMORIES.md" data-testid="memories" className="min-w-0">
      <p className="muted m-0 text-[12px]">{MEMORIES_PATH} · shared by every session of this workspace</p>
      {file.data.truncated && <p className="muted m-0 text-[12px]" role="note">Showing the start of the file only.</p>}
      <div className="markdown min-w-0"><Markdown text={file.data.content} /></div>
    </article>
  );
}
