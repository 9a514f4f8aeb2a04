// Optimization (GEPA): modules, datasets, runs. Shows a truthful unavailable state until the API exists.
import { useQuery } from "@tanstack/react-query";
import { ErrorView, Loading } from "../components/States";
import { Unavailable } from "../components/Unavailable";
import { rawFetch } from "../lib/api/client";
import { ApiError } from "../lib/api/errors";

export function OptimizationPage() {
  const status = useQuery({
    queryKey: ["optimization", "status"],
    retry: false,
    queryFn: async () => {
      try {
        return (await (await rawFetch("/api/v1/optimization/status")).json()) as Record<string, unknown>;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }
    },
  });
  return (
    <div className="page stack">
      <h1 style={{ fontSize: 20, margin: 0 }}>Optimization</h1>
      {status.isPending && <Loading />}
      {status.error && <ErrorView error={status.error} />}
      {status.data === null && <Unavailable feature="Optimization (GEPA runs, datasets, compare, promote)" endpoint="/api/v1/optimization" />}
      {status.data && <pre>{JSON.stringify(status.data, null, 2)}</pre>}
    </div>
  );
}
