// Server state of the session side panel: the context the turns loaded, the session's artifacts. MEMORIES.md
// and artifact bodies are workspace files, read through the volume route (features/volumes/queries).
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../lib/api/client";

export const MEMORIES_PATH = "memory/MEMORIES.md";

export function useSessionContext(sessionId: string) {
  return useQuery({
    queryKey: ["sessions", "context", sessionId],
    queryFn: () => call(api.GET("/api/v1/sessions/{session_id}/context", { params: { path: { session_id: sessionId } } })),
  });
}

export function useSessionArtifacts(sessionId: string) {
  return useQuery({
    queryKey: ["sessions", "artifacts", sessionId],
    queryFn: () => call(api.GET("/api/v1/artifacts", { params: { query: { session_id: sessionId, limit: 200 } } })),
  });
}
