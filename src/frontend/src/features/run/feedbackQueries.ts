// A user's saved feedback on a run (one per run): read it back, replace it, clear it. The turn's feedback form,
// the run tree's rating badge and the optimization page's rated runs share the ["feedback"] queries.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, call, type Schemas } from "../../lib/api/client";
import { refreshAfterWrite } from "../../lib/refresh";

export type RatedRun = Schemas["RatedRunOut"];
export type SavedFeedback = Schemas["FeedbackOut"];
export type Rating = "up" | "down";
export const RATING_LABEL: Record<Rating, string> = { up: "▲ Good", down: "▼ Bad" };
const KEY = ["feedback"] as const;

/** The caller's feedback on the run, or null when they have not rated it. */
export function useRunFeedback(runId: string | null) {
  return useQuery({
    queryKey: [...KEY, "run", runId],
    enabled: !!runId,
    queryFn: async (): Promise<SavedFeedback | null> => {
      const page = await call(api.GET("/api/v1/traces/feedback", { params: { query: { run_id: runId!, limit: 1 } } }));
      return page.items[0] ?? null;
    },
  });
}

export interface RatedFilters { rating?: Rating; mode?: string; limit?: number; offset?: number }

export function useRatedRuns(filters: RatedFilters) {
  return useQuery({
    queryKey: [...KEY, "list", filters],
    queryFn: () => call(api.GET("/api/v1/traces/feedback", { params: { query: { limit: 50, ...filters } } })),
  });
}

export function useFeedbackMutations(runId: string) {
  const client = useQueryClient();
  // this run's query takes the server's answer at once; the listings refetch
  const settle = (saved: SavedFeedback | null) => {
    client.setQueryData([...KEY, "run", runId], saved);
    void refreshAfterWrite(client, { queryKey: [...KEY, "list"] });
  };
  return {
    save: useMutation({
      mutationFn: (body: Schemas["FeedbackPut"]) =>
        call(api.PUT("/api/v1/traces/feedback/{run_id}", { params: { path: { run_id: runId } }, body })),
      onSuccess: settle,
    }),
    clear: useMutation({
      mutationFn: () => call(api.DELETE("/api/v1/traces/feedback/{run_id}", { params: { path: { run_id: runId } } })),
      onSuccess: () => settle(null),
    }),
  };
}
