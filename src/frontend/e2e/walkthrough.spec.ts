// The walk-through of issue #41: what a new user does in a session, on `fleet web` with the README's `--demo`
// fake LM and a fresh data dir (its own stack, not the scripted one of the other specs). Each action ends with a
// screenshot (test-results/screens/walkthrough-*.png, and docs/images/walkthrough/*.png, shown by
// docs/walkthrough.md): attach a file and ask, a follow-up that reads it, a step opened at 1440 px with the panel
// open, a rating kept over a reload, the shared HTML at 390 px, a fork continued, a context source removed, and
// a version that is not better promoted only after being asked.
import type { Page } from "@playwright/test";
import { readFile } from "node:fs/promises";
import { test as base, expect, screenshot, type ShotOptions } from "./fixtures";
import { startServers, stopServers, type ServerState } from "./servers";

const test = base.extend<object, { demo: ServerState }>({
  demo: [
    async ({}, use) => {
      const stack = await startServers({ demo: true, latency: "0.2" });
      await use(stack);
      stopServers(stack);
    },
    { scope: "worker", timeout: 180_000 },
  ],
  baseURL: async ({ demo }, use) => use(demo.baseUrl),
});

const SALES = "region,quarter,sales\nnorth,Q1,1234\nsouth,Q1,987\neast,Q1,1530\nwest,Q1,760\nnorth,Q2,1410\nsouth,Q2,1002\n";
const sessionIdOf = (page: Page) => /\/app\/workspace\/([\w-]+)/.exec(page.url())![1];
const current = (page: Page) => page.getByRole("article", { name: "Current turn" }).getByTestId("run-panel");
/** A screenshot after each action; `doc` is a string literal so tests/test_doc_images.py can see it. */
const step = (page: Page, options: ShotOptions & { doc: string }) => screenshot(page, options.doc.replace("/", "-"), options);

async function ask(page: Page, task: string): Promise<void> {
  await page.getByRole("textbox", { name: /^Task/ }).fill(task);
  await page.getByRole("button", { name: "Run ▶" }).click();
  await expect(page.getByLabel("Current turn").getByLabel("Your message")).toHaveText(task);
  await expect(current(page)).toHaveAttribute("data-phase", "succeeded", { timeout: 90_000 });
}

async function openPanel(page: Page): Promise<void> {
  if (!(await page.getByRole("button", { name: "Hide panel" }).count())) await page.getByRole("button", { name: "Panel", exact: true }).click();
  await expect(page.locator("#session-panel")).toBeVisible();
}

test("walk-through with the demo model: a session keeps what the user gave it", async ({ page, browser, demo }) => {
  test.setTimeout(600_000); // a dozen demo turns and a GEPA run on a shared 2-core machine
  await page.setViewportSize({ width: 1440, height: 900 });

  // 1. attach a CSV and ask: auto mode routes to rlm, which explores the file over four iterations
  await page.goto("/app/workspace");
  await page.getByTestId("file-input").setInputFiles({ name: "sales.csv", mimeType: "text/csv", buffer: Buffer.from(SALES) });
  await expect(page.getByLabel("Attachments")).toContainText("sales.csv");
  await ask(page, "Summarize the sales by region");
  const first = current(page);
  await expect(first.getByTestId("answer")).toContainText("On “Summarize the sales by region”: I read");
  await expect(first.getByTestId("answer")).toContainText("(7 lines of content) in 3 chunks.");
  await expect(first.getByText(/^Summary:/)).toHaveCount(0); // the answer is not repeated as a summary below it
  await expect(first.getByTestId("answer")).toContainText("A child agent looked closer:"); // iterations 3 and 4 ran
  await expect(first.getByRole("treeitem").filter({ hasText: "Iteration 1" }).first()).toBeVisible(); // (the tree is virtualized)
  await step(page, { doc: "walkthrough/01-attach-and-ask" });

  // 2. a follow-up reads the file again, without re-uploading it
  await expect(page.getByLabel("Attachments")).not.toContainText("sales.csv");
  await ask(page, "Which region sold the most in one quarter?");
  await expect(current(page).getByTestId("answer")).toContainText("On “Which region sold the most in one quarter?”");
  await expect(current(page).getByTestId("answer")).toContainText("“east,Q1,1530” stands out");
  await page.getByLabel("Current turn").getByLabel("Your message").evaluate((el) => el.scrollIntoView({ block: "start" }));
  await step(page, { doc: "walkthrough/02-follow-up-reads-the-file" });

  // 3. a step opened at 1440 px with the side panel open: the tree keeps its labels, the detail has room
  await openPanel(page);
  const tree = current(page).getByRole("tree", { name: "Run steps" });
  await current(page).getByRole("button", { name: "Expand all" }).click();
  await tree.getByRole("treeitem").filter({ hasText: "Iteration 2" }).first().click();
  const detail = page.getByTestId("node-detail");
  await expect(detail).toBeVisible();
  await expect(detail).toContainText("llm_query_batched");
  expect((await tree.boundingBox())!.width).toBeGreaterThanOrEqual(560);
  await tree.evaluate((el) => el.scrollIntoView({ block: "start" })); // the tree, and the detail below it
  await step(page, { doc: "walkthrough/03-step-at-1440-with-panel" });

  // 4. rate the answer, reload, the rating is still there
  await current(page).getByRole("button", { name: "Good", exact: true }).click();
  await current(page).getByLabel("Comment (optional)").fill("found the top region");
  await current(page).getByRole("button", { name: "Send feedback" }).click();
  await expect(current(page).getByText("Thanks — feedback saved.")).toBeVisible();
  await page.reload();
  const saved = current(page).getByTestId("feedback-saved");
  await expect(saved.getByTestId("feedback-rating")).toHaveText("▲ Good");
  await expect(saved.getByTestId("feedback-comment")).toHaveText("“found the top region”");
  await saved.scrollIntoViewIfNeeded();
  await step(page, { doc: "walkthrough/04-rating-after-reload" });

  // 5. share as one HTML file, opened offline at 390 px: no sideways scroll, the workbench's iterations
  await page.getByRole("button", { name: "Share: export or fork this session" }).click();
  const pending = page.waitForEvent("download");
  await page.getByRole("menuitem", { name: /Share as HTML file/ }).click();
  const html = await readFile((await (await pending).path())!, "utf8");
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, offline: true });
  const viewer = await phone.newPage();
  await viewer.setContent(html, { waitUntil: "load" });
  await expect(viewer.locator(".tree .title").filter({ hasText: /^Iteration 1$/ }).first()).toBeVisible();
  await expect(viewer.locator(".answer").last()).toContainText("stands out");
  const widths = await viewer.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  expect(widths.scroll).toBeLessThanOrEqual(widths.client);
  await step(viewer, { doc: "walkthrough/05-shared-html-390", fullPage: false }); // the first screen: the page is long at 390 px
  await phone.close();

  // 6. fork from turn 1 and continue the fork
  const originId = sessionIdOf(page);
  await page.getByRole("article", { name: "Turn 1" }).getByRole("button", { name: /Fork from here/ }).click();
  await expect.poll(() => sessionIdOf(page)).not.toBe(originId);
  await expect(page.getByTestId("fork-origin")).toBeVisible();
  await expect(page.getByTestId("run-bar")).toHaveCount(0);
  await ask(page, "In this fork: which region sold the most?");
  await expect(current(page).getByTestId("answer")).toContainText("“east,Q1,1530” stands out"); // the fork kept the file
  await page.getByTestId("fork-origin").evaluate((el) => el.scrollIntoView({ block: "start" }));
  await step(page, { doc: "walkthrough/06-fork-continued" });

  // 7. remove the file from the fork's context: the next turn has none (and the origin keeps its own)
  await openPanel(page);
  const side = page.getByRole("complementary", { name: "Session panel" });
  const item = side.getByTestId("context-item").filter({ hasText: "sales.csv" });
  await expect(item).toContainText("turn 1");
  await item.getByRole("button", { name: "Remove sales.csv from the session" }).click();
  await expect(side.getByTestId("context-item")).toHaveCount(0);
  await ask(page, "What is left to read now?");
  await expect(current(page).getByTestId("answer")).toContainText("No context was attached.");
  await step(page, { doc: "walkthrough/07-context-source-removed" });
  const origin = await (await fetch(`${demo.baseUrl}/api/v1/sessions/${originId}/context`)).json();
  expect(JSON.stringify(origin)).toContain("sales.csv");

  // 8. optimize `direct` on a small dataset; the candidate is not better, so promoting it asks first
  await page.goto("/app/optimization");
  const row = (task: string) => JSON.stringify({ task, answer: "42" });
  const rows = ["6 x 7", "40 + 2", "84 / 2", "50 - 8", "21 * 2", "44 - 2"].map((q) => row(`What is ${q}?`)).join("\n") + "\n";
  const upload = page.getByRole("form", { name: "Upload dataset" });
  await upload.getByLabel("Module").selectOption("direct");
  await upload.getByTestId("dataset-file").setInputFiles({ name: "answers.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(rows) });
  await upload.getByLabel("Dataset name").fill("walkthrough-answers");
  await upload.getByRole("button", { name: "Upload dataset" }).click();
  await expect(upload.getByRole("status")).toContainText("(6 rows)");
  const start = page.getByRole("form", { name: "Start a run" });
  await start.getByLabel("Module to optimize").selectOption("direct");
  await start.getByLabel("Dataset").selectOption({ label: "walkthrough-answers (6 rows)" });
  await start.getByRole("radio", { name: "max metric calls" }).check();
  await start.getByRole("spinbutton", { name: "Metric-call budget" }).fill("4");
  await start.getByRole("button", { name: "Start optimization" }).click();
  const run = page.getByTestId("opt-run-detail");
  await expect(run).toHaveAttribute("data-status", "succeeded", { timeout: 180_000 });
  await run.getByRole("button", { name: /^Promote direct-v\d+$/ }).click();
  const dialog = page.getByRole("dialog", { name: /^Promote direct-v\d+\?$/ });
  await expect(dialog.getByRole("alert")).toContainText("Not better than builtin-1");
  await expect(dialog.getByRole("button", { name: "Promote anyway" })).toBeVisible();
  await step(page, { doc: "walkthrough/08-promote-asks-when-not-better" });
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(run.getByTestId("promoted-badge")).toHaveCount(0);
});
