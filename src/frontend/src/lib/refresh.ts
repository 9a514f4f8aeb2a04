// After a write, show it: refetch what the write changed, even when a first load of that data is still in
// flight. TanStack Query's `invalidateQueries` joins a fetch already running when the query has no data yet
// (its first load), and that fetch may have read the server before the write: the page would then show the
// old list until the next refetch (a profile added while the settings page loads never appeared). Cancelling
// first reverts such a fetch, so the refetch that follows is a new read.
import type { InvalidateQueryFilters, QueryClient } from "@tanstack/react-query";

export async function refreshAfterWrite(client: QueryClient, filters: InvalidateQueryFilters): Promise<void> {
  await client.cancelQueries(filters);
  await client.invalidateQueries(filters);
}
