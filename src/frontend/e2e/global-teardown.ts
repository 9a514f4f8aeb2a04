import { readFileSync } from "node:fs";
import type { ServerState } from "./servers";
import { STATE_FILE } from "./servers";

// Stops exactly the process groups globalSetup started (SIGTERM lets uvicorn and the fake LM shut down cleanly).
export default async function globalTeardown(): Promise<void> {
  const state = JSON.parse(readFileSync(STATE_FILE, "utf8")) as ServerState;
  for (const pid of state.pids) {
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      /* already gone */
    }
  }
}
