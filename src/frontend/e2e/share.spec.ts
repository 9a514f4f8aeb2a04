// Share and export from the Workspace: the HTML file downloaded through the UI opens offline and makes no
// request; Markdown carries the task and the answer; the new controls pass axe.
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect, newSessionWithTask, state, test } from "./fixtures";
import { FAN_OUT_ANSWER, FAN_OUT_TASK } from "./scenarios";

test.describe.configure({ timeout: 120_000 }); // several scripted runs each, on a shared 2-core machine

async function downloadFrom(page: Page, item: RegExp): Promise<{ name: string; text: string }> {
  await page.getByRole("button", { name: "Share: export or fork this session" }).click();
  const pending = page.waitForEvent("download");
  await page.getByRole("menuitem", { name: item }).click();
  const download = await pending;
  return { name: download.suggestedFilename(), text: await readFile((await download.path())!, "utf8") };
}

async function seriousViolations(page: Page): Promise<string[]> {
  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  return axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

test("Share as HTML downloads one file that renders the run tree and answer offline with zero requests", async ({ page, browser, shot }) => {
  await newSessionWithTask(page, FAN_OUT_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run.getByTestId("answer")).toContainText(FAN_OUT_ANSWER, { timeout: 45_000 });
  await expect(run).toHaveAttribute("data-phase", "succeeded");

  await page.getByRole("button", { name: "Share: export or fork this session" }).click();
  await expect(page.getByRole("menu")).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
  await shot("share-menu", { doc: "workspace/share-menu" });
  await page.keyboard.press("Escape");

  const html = await downloadFrom(page, /Share as HTML file/);
  expect(html.name).toMatch(/\.html$/);
  expect(html.text.slice(0, 15).toLowerCase()).toBe("<!doctype html>");

  // a fresh browser context with the network off; every request (if any) is counted and fails
  const offline = await browser.newContext();
  await offline.setOffline(true);
  let routed = 0;
  await offline.route("**/*", (route) => (routed++, route.abort()));
  const viewer = await offline.newPage();
  const seen: string[] = [];
  viewer.on("request", (r) => seen.push(r.url()));
  await viewer.setContent(html.text, { waitUntil: "load" });
  await expect(viewer.getByRole("heading", { level: 2, name: "Turn 1" })).toBeVisible();
  await expect(viewer.locator(".answer")).toContainText(FAN_OUT_ANSWER);
  await expect(viewer.locator(".tree .node").first()).toBeVisible();
  expect(await viewer.locator(".tree .node.k-child").count()).toBeGreaterThanOrEqual(3);
  await expect(viewer.locator("#redaction")).toBeVisible();
  await viewer.screenshot({ path: path.join("test-results", "screens", "share-html-offline.png"), fullPage: true });
  // the workbench's tree (iterations, cells, the fan-out tool, children), readable from 360 px up
  const titles = viewer.locator(".tree .title");
  await expect(titles.filter({ hasText: /^Iteration 1$/ }).first()).toBeVisible();
  for (const label of ["REPL cell", "rlm_query_batched", "Child RLM · depth 1", "llm_query_batched"]) {
    await expect(titles.filter({ hasText: label }).first()).toBeVisible();
  }
  expect(await viewer.locator(".tree .title").evaluateAll((els) => els.map((e) => e.textContent).filter((t) => /^(turn_started|status|usage|final)$/.test(t ?? "")))).toEqual([]);
  for (const width of [390, 360]) {
    await viewer.setViewportSize({ width, height: 844 });
    const { scroll, client } = await viewer.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
    expect(scroll, `horizontal scroll at ${width} px`).toBeLessThanOrEqual(client);
    // every title is shown whole: none is clipped or squeezed to nothing
    const clipped = await titles.evaluateAll((els) => els.filter((e) => e.getClientRects().length && (e.scrollWidth > e.clientWidth + 1 || e.clientWidth < 20)).map((e) => e.textContent));
    expect(clipped).toEqual([]);
    await viewer.screenshot({ path: path.join("test-results", "screens", `share-html-${width}.png`) });
  }
  await viewer.setViewportSize({ width: 1440, height: 900 });
  await viewer.screenshot({ path: path.join("test-results", "screens", "share-html-1440.png") });
  await viewer.waitForTimeout(300);
  expect(seen).toEqual([]);
  expect(routed).toBe(0);
  await offline.close();
});

test("Export as Markdown carries the task and the answer; Export JSON is the bundle", async ({ page }) => {
  await newSessionWithTask(page, "Markdown export: what is six times seven?", "rlm");
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  const md = await downloadFrom(page, /Export as Markdown/);
  expect(md.name).toMatch(/\.md$/);
  expect(md.text).toContain("Markdown export: what is six times seven?");
  expect(md.text).toContain("The answer is **42**.");
  const json = await downloadFrom(page, /Export JSON/);
  expect(json.name).toMatch(/\.json$/);
  expect(JSON.parse(json.text).format).toBe("fleet-rlm.session-export/1");
});

test("a failed export says so in one line instead of failing silently", async ({ page }) => {
  await newSessionWithTask(page, "Export that the server refuses", "rlm");
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  // the session is deleted behind the page's back (another tab, the CLI): the server answers 404
  const id = /\/app\/workspace\/([\w-]+)/.exec(page.url())![1];
  expect((await fetch(`${state().baseUrl}/api/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
  await page.getByRole("button", { name: "Share: export or fork this session" }).click();
  await page.getByRole("menuitem", { name: /Share as HTML file/ }).click();
  await expect(page.getByTestId("action-error")).toHaveText(/Export failed: .*not found/i);
  await page.getByRole("button", { name: "Dismiss the error" }).click();
  await expect(page.getByTestId("action-error")).toHaveCount(0);
});
