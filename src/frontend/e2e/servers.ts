// Starts the fake LM and `fleet web` as real processes (each in its own process group) for the browser tests.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { SCRIPT } from "./scenarios";

const FRONTEND = process.cwd(); // playwright runs from src/frontend (npm run e2e / make ui-e2e)
export const REPO = path.resolve(FRONTEND, "../..");
export const STATE_FILE = path.join(FRONTEND, "test-results", "servers.json");
export const ANSWER = "The answer is **42**.";

export interface ServerState {
  baseUrl: string;
  lmUrl: string;
  dataDir: string;
  pids: number[];
}

function start(args: string[], env: NodeJS.ProcessEnv, log: string): ChildProcess {
  const child = spawn("uv", ["run", "--frozen", ...args], { cwd: REPO, env: { ...process.env, ...env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const chunks: string[] = [];
  child.stdout?.on("data", (d) => chunks.push(String(d)));
  child.stderr?.on("data", (d) => chunks.push(String(d)));
  child.on("exit", () => writeFileSync(log, chunks.join("")));
  process.on("exit", () => writeFileSync(log, chunks.join("")));
  return child;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface StackOptions {
  answer?: string; // what the fake model answers every program with (RLM steps SUBMIT it)
  script?: unknown; // fake-LM rules tried before the answer-everything rule (default: e2e/scenarios.ts)
  env?: NodeJS.ProcessEnv; // extra settings for `fleet web`
  demo?: boolean; // the README's `--demo` fake LM instead of the scripted one (answer and script are ignored)
  latency?: string; // seconds the fake LM waits before each answer (default FAKE_LM_LATENCY or 0.6)
}

export async function startServers(options: StackOptions = {}): Promise<ServerState> {
  const root = mkdtempSync(path.join(tmpdir(), "fleet-ui-e2e-"));
  const ready = path.join(root, "lm.ready");
  const script = path.join(root, "lm-script.json");
  writeFileSync(script, JSON.stringify(options.script ?? SCRIPT));
  const answers = options.demo ? ["--demo"] : ["--script", script, "--auto", options.answer ?? ANSWER];
  const latency = options.latency ?? process.env.FAKE_LM_LATENCY ?? "0.6";
  const lm = start(
    ["python", "-m", "fleet_rlm.testing.fake_lm", "--port", "0", ...answers, "--latency", latency, "--ready-file", ready],
    {},
    path.join(root, "fake-lm.log"),
  );
  await waitFor(() => existsSync(ready) && readFileSync(ready, "utf8").includes("base_url="), "the fake LM");
  const lmUrl = /base_url=(\S+)/.exec(readFileSync(ready, "utf8"))![1];
  const port = await freePort();
  const dataDir = path.join(root, "data");
  const web = start(
    ["fleet", "web", "--port", String(port)],
    { FLEET_DATA_DIR: dataDir, DSPY_LM_MODEL: "openai/fake-model", DSPY_LM_API_BASE: lmUrl, DSPY_LLM_API_KEY: "fake", FLEET_AUTH_MODE: "none", ...options.env },
    path.join(root, "fleet-web.log"),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(async () => {
    if (web.exitCode !== null) throw new Error(`fleet web exited (${web.exitCode}); see ${root}/fleet-web.log`);
    return fetch(`${baseUrl}/health`).then((r) => r.ok, () => false);
  }, "fleet web");
  return { baseUrl, lmUrl, dataDir, pids: [lm.pid!, web.pid!] };
}

/** Stops exactly the process groups `startServers` started (SIGTERM lets uvicorn and the fake LM exit cleanly). */
export function stopServers(state: ServerState): void {
  for (const pid of state.pids) {
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      /* already gone */
    }
  }
}
