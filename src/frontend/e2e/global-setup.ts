import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startServers, STATE_FILE } from "./servers";

export default async function globalSetup(): Promise<void> {
  const state = await startServers();
  mkdirSync(path.dirname(STATE_FILE), { recursive: true });
  writeFileSync(STATE_FILE, JSON.stringify(state));
  process.env.FLEET_E2E_BASE_URL = state.baseUrl;
}
