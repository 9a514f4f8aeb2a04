// Layout at the widths people use: a step's detail never squeezes the tree (1440 px with the side panel open,
// and a phone), a phone keeps most of its height for the conversation, the run bar covers no control, a run
// that did not recurse draws a normal-sized graph that still zooms, and every control whose aria-label differs
// from its text keeps its visible label in its accessible name (WCAG 2.5.3).
import type { Locator, Page } from "@playwright/test";
import { expect, newSessionWithTask, test } from "./fixtures";
import { FAN_OUT_ANSWER, FAN_OUT_TASK, LOOP_TASK, VARS_TASK } from "./scenarios";

test.describe.configure({ timeout: 150_000 }); // scripted runs on a shared 2-core machine

/** Controls whose visible text (symbols and aria-hidden parts aside) is missing from their aria-label. */
async function labelNotInName(page: Page): Promise<string[]> {
  return page.locator("button[aria-label], a[aria-label], [role=menuitem][aria-label], [role=tab][aria-label]").evaluateAll((els) => {
    const words = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
    const visible = (node: Node): string => {
      if (node.nodeType === Node.TEXT_NODE) return node.textContent ?? "";
      if (!(node instanceof Element) || node.getAttribute("aria-hidden") === "true") return "";
      if (node instanceof HTMLElement && node.classList.contains("sr-only")) return "";
      return [...node.childNodes].map(visible).join("");
    };
    return els
      .filter((el) => (el as HTMLElement).offsetParent !== null || el.getClientRects().length > 0)
      .map((el) => ({ text: words(visible(el)), name: words(el.getAttribute("aria-label") ?? "") }))
      .filter(({ text, name }) => text !== "" && !name.includes(text))
      .map(({ text, name }) => `"${text}" not in "${name}"`);
  });
}

/** Tree rows whose title is cut (ellipsis) or squeezed to nothing. */
async function clippedTitles(tree: Locator): Promise<string[]> {
  return tree.locator('[role="treeitem"] span.font-medium').evaluateAll((els) =>
    els.filter((e) => e.scrollWidth > e.clientWidth + 1 || e.clientWidth < 24).map((e) => e.textContent ?? ""));
}

async function openPanel(page: Page): Promise<void> {
  if (!(await page.getByRole("button", { name: "Hide panel" }).count())) await page.getByRole("button", { name: "Panel", exact: true }).click();
  await expect(page.locator("#session-panel")).toBeVisible();
}

test("every control with an aria-label keeps its visible label in its accessible name", async ({ page }) => {
  await newSessionWithTask(page, VARS_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-outcome", "succeeded", { timeout: 45_000 });
  await run.locator('[role="treeitem"][data-kind="code"]').first().click();
  await expect(page.getByTestId("node-detail")).toBeVisible();
  const share = page.getByRole("button", { name: /^Share/ });
  await expect(share).toHaveAccessibleName("Share: export or fork this session");
  await expect(run.getByRole("button", { name: "Good" })).toBeVisible();
  expect(await labelNotInName(page), "workspace").toEqual([]);
  await openPanel(page);
  expect(await labelNotInName(page), "session panel").toEqual([]);
  for (const path of ["/app/settings", "/app/volumes", "/app/optimization"]) {
    await page.goto(path);
    await page.waitForLoadState("networkidle");
    expect(await labelNotInName(page), path).toEqual([]);
  }
});

test("1440 px with the side panel open: opening a step keeps the tree's labels whole", async ({ page, shot }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await newSessionWithTask(page, FAN_OUT_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run.getByTestId("answer")).toContainText(FAN_OUT_ANSWER, { timeout: 45_000 });
  await openPanel(page);
  const tree = run.getByRole("tree", { name: "Run steps" });
  await run.getByRole("button", { name: "Expand all" }).click();
  await tree.getByRole("treeitem").filter({ hasText: "Iteration 1" }).first().click();
  const detail = page.getByTestId("node-detail");
  await expect(detail).toBeVisible();
  await expect(tree.locator('[role="treeitem"] span.font-medium').first()).toBeVisible();
  expect(await clippedTitles(tree)).toEqual([]);
  const treeBox = (await tree.boundingBox())!;
  const detailBox = (await detail.boundingBox())!;
  expect(treeBox.width).toBeGreaterThanOrEqual(560); // the tree keeps the room, the detail goes below it here
  expect(detailBox.width).toBeGreaterThanOrEqual(280);
  await shot("layout-1440-panel-step");
  // without the side panel there is room for both side by side
  await page.getByRole("button", { name: "Hide panel" }).click();
  await expect.poll(async () => (await detail.boundingBox())!.y < (await tree.boundingBox())!.y + (await tree.boundingBox())!.height).toBe(true);
  expect(await clippedTitles(tree)).toEqual([]);
  await shot("layout-1440-step");
  // a phone: the detail goes below the tree, titles are still whole
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(detail).toBeVisible();
  expect(await clippedTitles(tree)).toEqual([]);
  await shot("layout-390-step");
});

test("390x844: the conversation keeps most of the screen and the run bar covers no control", async ({ page, shot }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await newSessionWithTask(page, LOOP_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run.locator('[role="treeitem"][data-kind="iteration"]').nth(1)).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("run-bar")).toBeVisible();
  const scroll = page.locator(".conversation .scroll");
  const height = await scroll.evaluate((el) => el.clientHeight);
  expect(height, "px left for the conversation").toBeGreaterThanOrEqual(844 / 2);
  // each control of the run, scrolled to the top of the conversation, is itself what a tap there hits
  for (const name of ["Timeline", "Expand all", "Collapse all"]) {
    const button = run.getByRole("button", { name, exact: true });
    await button.evaluate((el) => el.scrollIntoView({ block: "start" }));
    const hit = await button.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      return !!top && (top === el || el.contains(top));
    });
    expect(hit, `${name} is covered`).toBe(true);
  }
  await scroll.evaluate((el) => el.scrollTo(0, 0));
  await shot("layout-390-running");
  await page.keyboard.press("Escape");
  await expect(run).toHaveAttribute("data-outcome", "cancelled", { timeout: 45_000 });
});

test("a run without children draws one normal-sized node in the recursion graph, and zoom works", async ({ page, shot }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await newSessionWithTask(page, VARS_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-outcome", "succeeded", { timeout: 45_000 });
  await run.getByRole("button", { name: "Recursion graph" }).click();
  const graph = page.getByTestId("recursion-graph");
  const node = graph.locator(".react-flow__node");
  await expect(node).toHaveCount(1);
  await expect(graph).toContainText("No child RLMs");
  const before = (await node.boundingBox())!;
  expect(before.width).toBeLessThanOrEqual(200); // 190 px at 1:1, never magnified to fill the pane
  const zoomIn = graph.getByRole("button", { name: /zoom in/i });
  await expect(zoomIn).toBeEnabled();
  await zoomIn.click();
  await expect.poll(async () => (await node.boundingBox())!.width).toBeGreaterThan(before.width);
  await shot("layout-390-graph-single");
  await page.setViewportSize({ width: 1440, height: 900 });
  await shot("layout-1440-graph-single");
});
