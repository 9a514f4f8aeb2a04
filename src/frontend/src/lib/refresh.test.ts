import { QueryClient, QueryObserver } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { refreshAfterWrite } from "./refresh";

/** A server list read by the query; each read resolves when the test says so, with what it read at its start. */
function slowServer() {
  const rows: string[] = ["old"];
  const reads: { snapshot: string[]; release: () => void }[] = [];
  const read = () =>
    new Promise<string[]>((resolve) => {
      const snapshot = [...rows];
      reads.push({ snapshot, release: () => resolve(snapshot) });
    });
  return { rows, reads, read };
}

describe("refreshAfterWrite", () => {
  it("shows a write made while the first load is still in flight", async () => {
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    const server = slowServer();
    const observer = new QueryObserver(client, { queryKey: ["items"], queryFn: server.read });
    const unsubscribe = observer.subscribe(() => undefined); // the page shows the list: the query is active
    await Promise.resolve();
    expect(server.reads).toHaveLength(1); // the first load read the list before the write

    server.rows.push("new"); // the write lands on the server
    const refreshed = refreshAfterWrite(client, { queryKey: ["items"] });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(server.reads).toHaveLength(2); // a new read, not the first load joined
    server.reads[0].release();
    server.reads[1].release();
    await refreshed;
    expect(client.getQueryData(["items"])).toEqual(["old", "new"]);
    unsubscribe();
  });

  it("refetches once when the list was already loaded", async () => {
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    const server = slowServer();
    const observer = new QueryObserver(client, { queryKey: ["items"], queryFn: server.read });
    const unsubscribe = observer.subscribe(() => undefined);
    await Promise.resolve();
    server.reads[0].release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    server.rows.push("new");
    const refreshed = refreshAfterWrite(client, { queryKey: ["items"] });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(server.reads).toHaveLength(2);
    server.reads[1].release();
    await refreshed;
    expect(client.getQueryData(["items"])).toEqual(["old", "new"]);
    unsubscribe();
  });
});
