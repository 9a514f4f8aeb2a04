// Server state of the session side panel: the context the session holds (and removing one source), the session's
// artifacts. MEMORIES.md
// and artifact bodies are workspace files, read through the volume route (features/volumes/queries).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, call } from "../../lib/api/client";
import { refreshAfterWrite } from "../../lib/refresh";

export const MEMORIES_PATH = "memory/MEMORIES.md";

export function useSessionContext(sessionId: string) {
  return useQuery({
    queryKey: ["sessions", "context", sessionId],
    queryFn: () => call(api.GET("/api/v1/sessions/{session_id}/context", { params: { path: { session_id: sessionId } } })),
  });
}

/** Remove one source from the session's context: the next turn no longer gets it. */
export function useRemoveContextSource(sessionId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (sourceId: string) =>
      call(api.DELETE("/api/v1/sessions/{session_id}/context/{source_id}", { params: { path: { session_id: sessionId, source_id: sourceId } } })),
    onSuccess: () => refreshAfterWrite(client, { queryKey: ["sessions", "context", sessionId] }),
  });
}

export function useSessionArtifacts(sessionId: string) {
  return useQuery({
    queryKey: ["sessions", "artifacts", sessionId],
    queryFn: () => call(api.GET("/api/v1/artifacts", { params: { query: { session_id: sessionId, limit: 200 } } })),
  });
}
