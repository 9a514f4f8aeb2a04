// Stopping a run: one cancellation request, shared by the run panel's button, the sticky run bar and Esc.
import { useMutation } from "@tanstack/react-query";
import { api, call } from "../../lib/api/client";

export function useStop(runId: string | null) {
  const cancel = useMutation({
    mutationKey: ["cancel", runId],
    mutationFn: (id: string) => call(api.PUT("/api/v1/runs/{run_id}/cancellation", { params: { path: { run_id: id } } })),
  });
  return {
    stop: () => {
      if (runId && !cancel.isPending && !cancel.isSuccess) cancel.mutate(runId);
    },
    pending: cancel.isPending || cancel.isSuccess,
    error: cancel.error as unknown,
  };
}
