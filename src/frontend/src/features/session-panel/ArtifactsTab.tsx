// Artifacts tab: this session's files, newest first; choosing one previews it inline (CSV as a table; text,
// Markdown, JSON and images through the Volumes file viewer).
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Empty, ErrorView, Loading } from "../../components/States";
import type { Schemas } from "../../lib/api/client";
import { ApiError } from "../../lib/api/errors";
import { formatBytes } from "../composer/Attachments";
import { FileViewer } from "../volumes/FileViewer";
import { useVolumeFile } from "../volumes/queries";
import { CsvPreview, isCsv } from "./CsvPreview";
import { useSessionArtifacts } from "./queries";
import { refreshAfterWrite } from "../../lib/refresh";

export function ArtifactsTab({ sessionId }: { sessionId: string }) {
  const artifacts = useSessionArtifacts(sessionId);
  const [chosen, setChosen] = useState<string | null>(null);
  if (artifacts.isPending) return <Loading />;
  if (artifacts.error) return <ErrorView error={artifacts.error} retry={() => void artifacts.refetch()} />;
  const items = artifacts.data.items;
  if (items.length === 0) return <Empty>No artifacts yet. Files a run saves under artifacts/ show up here.</Empty>;
  const selected = items.find((a) => a.id === chosen) ?? items[0];
  return (
    <div className="space-y-2">
      <ul className="m-0 list-none space-y-1 p-0" aria-label="Session artifacts">
        {items.map((a) => (
          <li key={a.id}>
            <button type="button" className="artifact-choice" aria-pressed={a.id === selected.id} onClick={() => setChosen(a.id)}>
              <span className="min-w-0 grow truncate">{a.name}</span>
              <span className="muted shrink-0 text-[12px]">{formatBytes(a.size)}</span>
            </button>
          </li>
        ))}
      </ul>
      <ArtifactPreview key={selected.id} artifact={selected} />
    </div>
  );
}

function ArtifactPreview({ artifact }: { artifact: Schemas["ArtifactOut"] }) {
  const file = useVolumeFile(artifact.path);
  const client = useQueryClient();
  const [deleted, setDeleted] = useState(false);
  // the viewer's Delete removes the workspace file; the run's artifact record stays and says the file is gone
  const onDeleted = () => {
    setDeleted(true);
    void refreshAfterWrite(client, { queryKey: ["volume"] });
  };
  if (deleted || (file.error instanceof ApiError && file.error.status === 404))
    return (
      <p className="muted" role="note" data-testid="artifact-gone">
        {artifact.path} was deleted from the workspace after the run saved it; the run's record of it stays.
      </p>
    );
  if (file.isPending) return <Loading label={`Loading ${artifact.name}…`} />;
  if (file.error) return <ErrorView error={file.error} retry={() => void file.refetch()} />;
  return (
    <div data-testid="artifact-preview" className="min-w-0">
      {isCsv(artifact.path, artifact.media_type) && file.data.encoding === "utf-8"
        ? <CsvPreview file={file.data} />
        : <FileViewer file={file.data} onDeleted={onDeleted} />}
    </div>
  );
}
