// Stopping a run: one cancellation request, shared by the run panel's button, the sticky run bar and Esc.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, call } from "../../lib/api/client";
import { ApiError } from "../../lib/api/errors";
import { refreshAfterWrite } from "../../lib/refresh";

export function useStop(runId: string | null) {
  const client = useQueryClient();
  const cancel = useMutation({
    mutationKey: ["cancel", runId],
    mutationFn: (id: string) => call(api.PUT("/api/v1/runs/{run_id}/cancellation", { params: { path: { run_id: id } } })),
    onError: (error, id) => {
      if (error instanceof ApiError && error.code === "run_finished") void refreshAfterWrite(client, { queryKey: ["runs", id], exact: true });
    },
  });
  // run_finished: the run ended before the request arrived; its own end event (or record) shows how
  const ended = cancel.error instanceof ApiError && cancel.error.code === "run_finished";
  return {
    stop: () => {
      if (runId && !cancel.isPending && !cancel.isSuccess && !ended) cancel.mutate(runId);
    },
    pending: cancel.isPending || cancel.isSuccess,
    error: ended ? null : (cancel.error as unknown),
  };
}
