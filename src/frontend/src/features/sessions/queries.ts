// Server state of sessions (TanStack Query): list/search, one session, its turns, and active runs.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, call } from "../../lib/api/client";
import { refreshAfterWrite } from "../../lib/refresh";

export const sessionKeys = {
  list: (q: string, generated: boolean) => ["sessions", "list", q, generated] as const,
  one: (id: string) => ["sessions", "one", id] as const,
  turns: (id: string) => ["sessions", "turns", id] as const,
  state: ["sessions", "state"] as const,
};

/** The user's sessions; `generated` adds the ones tools made (one per bench task), hidden by default. */
export function useSessions(q: string, generated = false) {
  return useQuery({
    queryKey: sessionKeys.list(q, generated),
    queryFn: () =>
      call(
        api.GET("/api/v1/sessions", {
          params: { query: { q: q || undefined, limit: 100, include: generated ? "generated" : undefined } },
        }),
      ),
  });
}

const GENERATED_KEY = "fleet.sessions.showGenerated";

/** The sidebar's "Show generated" toggle, remembered across reloads. */
export function useShowGenerated(): [boolean, (value: boolean) => void] {
  const [value, setValue] = useState(() => localStorage.getItem(GENERATED_KEY) === "1");
  const set = (next: boolean) => {
    setValue(next);
    if (next) localStorage.setItem(GENERATED_KEY, "1");
    else localStorage.removeItem(GENERATED_KEY);
  };
  return [value, set];
}

export function useSession(id: string | undefined) {
  return useQuery({
    queryKey: sessionKeys.one(id ?? ""),
    enabled: !!id,
    queryFn: () => call(api.GET("/api/v1/sessions/{session_id}", { params: { path: { session_id: id! } } })),
  });
}

export function useTurns(id: string | undefined) {
  return useQuery({
    queryKey: sessionKeys.turns(id ?? ""),
    enabled: !!id,
    queryFn: () =>
      call(api.GET("/api/v1/sessions/{session_id}/turns", { params: { path: { session_id: id! }, query: { limit: 200 } } })),
  });
}

export function useSessionStates() {
  return useQuery({ queryKey: sessionKeys.state, queryFn: () => call(api.GET("/api/v1/sessions/state")) });
}

export function useSessionMutations() {
  const client = useQueryClient();
  const refresh = () => refreshAfterWrite(client, { queryKey: ["sessions"] });
  const create = useMutation({
    mutationFn: (title: string) => call(api.POST("/api/v1/sessions", { body: { title, origin: "user" } })),
    onSuccess: refresh,
  });
  const rename = useMutation({
    mutationFn: ({ id, title }: { id: string; title: string }) =>
      call(api.PATCH("/api/v1/sessions/{session_id}", { params: { path: { session_id: id } }, body: { title } })),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: string) => call(api.DELETE("/api/v1/sessions/{session_id}", { params: { path: { session_id: id } } })),
    onSuccess: refresh,
  });
  return { create, rename, remove };
}
