import { readFileSync } from "node:fs";
import type { ServerState } from "./servers";
import { STATE_FILE, stopServers } from "./servers";

// Stops exactly the process groups globalSetup started.
export default async function globalTeardown(): Promise<void> {
  stopServers(JSON.parse(readFileSync(STATE_FILE, "utf8")) as ServerState);
}
