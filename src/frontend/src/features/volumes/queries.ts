import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../lib/api/client";

export function useVolumeTree() {
  return useQuery({
    queryKey: ["volume", "tree"],
    queryFn: () => call(api.GET("/api/v1/runtime/volume/tree", { params: { query: { max_depth: 6, max_entries: 2000 } } })),
  });
}

export function useVolumeFile(path: string | null) {
  return useQuery({
    queryKey: ["volume", "file", path],
    enabled: !!path,
    queryFn: () => call(api.GET("/api/v1/runtime/volume/file", { params: { query: { path: path! } } })),
  });
}
