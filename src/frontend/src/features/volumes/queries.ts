import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, call, rawFetch, type Schemas } from "../../lib/api/client";
import { refreshAfterWrite } from "../../lib/refresh";

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

/** The top folders that take uploads and deletes; the server refuses the rest (`volume_read_only`). */
export const WRITABLE = ["memory", "artifacts"] as const;

export const isWritable = (path: string) => WRITABLE.some((top) => path.startsWith(`${top}/`));

const fileUrl = (path: string, overwrite = false) =>
  `/api/v1/runtime/volume/file?${new URLSearchParams({ path, ...(overwrite ? { overwrite: "true" } : {}) })}`;

/** Upload (PUT, the raw file as the body) and delete; both refresh the tree and the file's view. */
export function useVolumeWrites() {
  const client = useQueryClient();
  const refresh = (path: string) => {
    void refreshAfterWrite(client, { queryKey: ["volume", "tree"] });
    client.removeQueries({ queryKey: ["volume", "file", path] });
  };
  const upload = useMutation({
    mutationFn: async ({ path, file, overwrite }: { path: string; file: Blob; overwrite: boolean }): Promise<Schemas["VolumeWrite"]> => {
      const res = await rawFetch(fileUrl(path, overwrite), { method: "PUT", body: file, headers: { "content-type": "application/octet-stream" } });
      return (await res.json()) as Schemas["VolumeWrite"];
    },
    onSuccess: (written) => refresh(written.path),
  });
  const remove = useMutation({
    mutationFn: async (path: string) => {
      await rawFetch(fileUrl(path), { method: "DELETE" });
      return path;
    },
    onSuccess: (path) => refresh(path),
  });
  return { upload, remove };
}
