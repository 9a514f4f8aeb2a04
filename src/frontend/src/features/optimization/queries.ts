// Optimization server state: modules, datasets, runs (polled every second while active), results, compare,
// versions, and the mutations (upload, start, cancel, promote, rollback) that refresh them.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { api, call, type Schemas } from "../../lib/api/client";
import { refreshAfterWrite } from "../../lib/refresh";

export type OptRun = Schemas["fleet_rlm__schemas__optimization__RunOut"];
export type Module = Schemas["ModuleOut"];
export type Dataset = Schemas["DatasetOut"];
export type Compare = Schemas["CompareOut"];
export type Version = Schemas["VersionOut"];
export type RunResults = Schemas["RunResults"];

export const ACTIVE = ["queued", "running"];
export const isActive = (run: OptRun | undefined) => !!run && ACTIVE.includes(run.status);
const KEY = ["optimization"] as const;

export function useModules() {
  return useQuery({ queryKey: [...KEY, "modules"], queryFn: () => call(api.GET("/api/v1/optimization/modules")) });
}

export function useDatasets() {
  return useQuery({ queryKey: [...KEY, "datasets"], queryFn: () => call(api.GET("/api/v1/optimization/datasets")) });
}

export function useDataset(id: string | null) {
  return useQuery({
    queryKey: [...KEY, "dataset", id],
    enabled: !!id,
    queryFn: () => call(api.GET("/api/v1/optimization/datasets/{dataset_id}", { params: { path: { dataset_id: id! }, query: { limit: 20 } } })),
  });
}

export function useRuns() {
  return useQuery({
    queryKey: [...KEY, "runs"],
    queryFn: () => call(api.GET("/api/v1/optimization/runs", { params: { query: { limit: 100 } } })),
    refetchInterval: (q) => (q.state.data?.some((r) => ACTIVE.includes(r.status)) ? 2000 : false),
  });
}

/** Refreshes the status counters and versions when the list sees a run leave the active states. */
export function useRefreshOnRunEnd(runs: OptRun[] | undefined) {
  const client = useQueryClient();
  const active = (runs ?? []).filter((r) => ACTIVE.includes(r.status)).map((r) => r.id).join(",");
  const previous = useRef<string | null>(null);
  useEffect(() => {
    if (previous.current !== null && previous.current !== active) {
      void refreshAfterWrite(client, { queryKey: [...KEY, "status"] });
      void refreshAfterWrite(client, { queryKey: [...KEY, "versions"] });
    }
    previous.current = active;
  }, [active, client]);
}

const ended = new Set<string>();

/** One run; polled every second while queued or running, so progress is live. */
export function useRun(id: string | null) {
  const client = useQueryClient();
  return useQuery({
    queryKey: [...KEY, "run", id],
    enabled: !!id,
    queryFn: async () => {
      const run = await call(api.GET("/api/v1/optimization/runs/{run_id}", { params: { path: { run_id: id! } } }));
      // the run just ended: refresh what it changed (counters, the run list, saved versions), once
      if (!ACTIVE.includes(run.status) && !ended.has(run.id)) {
        ended.add(run.id);
        void refreshAfterWrite(client, { queryKey: KEY, predicate: (q) => !(q.queryKey[1] === "run" && q.queryKey[2] === id) });
      }
      return run;
    },
    refetchInterval: (q) => (isActive(q.state.data) ? 1000 : false),
  });
}

export function useRunResults(id: string | null, enabled: boolean) {
  return useQuery({
    queryKey: [...KEY, "results", id],
    enabled: !!id && enabled,
    queryFn: () => call(api.GET("/api/v1/optimization/runs/{run_id}/results", { params: { path: { run_id: id! } } })),
  });
}

export function useCompare(a: string | null, b: string | null) {
  return useQuery({
    queryKey: [...KEY, "compare", a, b],
    enabled: !!a && !!b,
    queryFn: () => call(api.GET("/api/v1/optimization/runs/compare", { params: { query: { a: a!, b: b! } } })),
  });
}

/** The run's version beside the current one on its validation rows (asked when the promote dialog opens). */
export function usePromotionCheck(id: string, enabled: boolean) {
  return useQuery({
    queryKey: [...KEY, "promotion", id],
    enabled,
    staleTime: 0,
    queryFn: () => call(api.GET("/api/v1/optimization/runs/{run_id}/promotion", { params: { path: { run_id: id } } })),
  });
}

export function useVersions() {
  return useQuery({ queryKey: [...KEY, "versions"], queryFn: () => call(api.GET("/api/v1/optimization/versions")) });
}

export function useOptimizationMutations() {
  const client = useQueryClient();
  const refresh = () => refreshAfterWrite(client, { queryKey: KEY });
  return {
    upload: useMutation({
      mutationFn: (body: Schemas["DatasetCreate"]) => call(api.POST("/api/v1/optimization/datasets", { body })),
      onSuccess: refresh,
    }),
    fromFeedback: useMutation({
      mutationFn: (body: Schemas["DatasetFromFeedback"]) => call(api.POST("/api/v1/optimization/datasets/from-feedback", { body })),
      onSuccess: refresh,
    }),
    start: useMutation({
      mutationFn: (body: Schemas["RunCreate"]) => call(api.POST("/api/v1/optimization/runs", { body })),
      onSuccess: refresh,
    }),
    cancel: useMutation({
      mutationFn: (id: string) => call(api.POST("/api/v1/optimization/runs/{run_id}/cancel", { params: { path: { run_id: id } } })),
      onSuccess: refresh,
    }),
    promote: useMutation({
      mutationFn: ({ id, confirm }: { id: string; confirm: boolean }) =>
        call(api.POST("/api/v1/optimization/runs/{run_id}/promote", { params: { path: { run_id: id }, query: { confirm } } })),
      onSuccess: refresh,
    }),
    rollback: useMutation({
      mutationFn: (module: string) => call(api.POST("/api/v1/optimization/modules/{module}/rollback", { params: { path: { module } } })),
      onSuccess: refresh,
    }),
  };
}

/** A score for display: 3 decimals, or a dash when there is none. */
export function fmtScore(value: unknown): string {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(3) : "–";
}

export function fmtDelta(value: unknown): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return "–";
  return `${value > 0 ? "+" : ""}${value.toFixed(3)}`;
}
