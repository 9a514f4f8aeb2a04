// The session side panel against a real fleet web and the fake LM: the context a turn loaded (with its size),
// the session's artifacts previewed inline (CSV as a table, JSON pretty), MEMORIES.md; axe; 390 px drawer.
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { PANEL_ANSWER, PANEL_MEMORY, PANEL_TASK } from "./scenarios";

const NOTES = "Panel notes: the capital of Norway is Oslo.\n";

async function seriousViolations(page: Page): Promise<string[]> {
  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  return axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

async function runPanelTurn(page: Page): Promise<void> {
  await page.goto("/app/workspace");
  await page.getByTestId("file-input").setInputFiles({ name: "panel-notes.txt", mimeType: "text/plain", buffer: Buffer.from(NOTES) });
  await expect(page.getByLabel("Attachments")).toContainText("panel-notes.txt");
  await page.getByRole("textbox", { name: /^Task/ }).fill(PANEL_TASK);
  await page.getByRole("combobox", { name: "Mode" }).selectOption("rlm");
  await page.getByRole("button", { name: "Run ▶" }).click();
  await expect(page).toHaveURL(/\/app\/workspace\/[\w-]+$/);
  await expect(page.getByTestId("run-panel").last().getByTestId("answer")).toContainText(PANEL_ANSWER, { timeout: 45_000 });
}

test.describe.configure({ timeout: 120_000 }); // a run, three tabs, reloads and axe passes on a shared 2-core machine

test("the side panel shows the loaded context with its size, artifacts as table and JSON, and MEMORIES.md", async ({ page, shot }) => {
  await runPanelTurn(page);
  const panel = page.getByRole("complementary", { name: "Session panel" });
  await expect(panel).toBeVisible();

  const doc = panel.getByTestId("context-item").filter({ hasText: "panel-notes.txt" });
  await expect(doc).toContainText(`${NOTES.length} chars`);
  await expect(doc).toContainText("turn 1");
  expect(await seriousViolations(page)).toEqual([]);

  await panel.getByRole("tab", { name: "Artifacts" }).click();
  await panel.getByRole("button", { name: /cities\.csv/ }).click();
  const table = panel.getByRole("figure", { name: "Table cities.csv" });
  await expect(table.getByRole("columnheader")).toHaveText(["city", "population"]);
  await expect(table.getByRole("row").nth(2).getByRole("cell")).toHaveText(["Bergen, Vestland", "291000"]);
  await shot("session-panel-csv", { doc: "workspace/session-panel-csv" });
  expect(await seriousViolations(page)).toEqual([]);

  await panel.getByRole("button", { name: /stats\.json/ }).click();
  await expect(panel.getByTestId("artifact-preview")).toContainText('"count": 2');
  await expect(panel.getByTestId("artifact-preview")).toContainText('"Bergen"');

  // deleting the file from its preview leaves the run's record, which then says the file is gone
  await panel.getByTestId("artifact-preview").getByRole("button", { name: "Delete" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await expect(panel.getByTestId("artifact-gone")).toContainText("stats.json was deleted from the workspace");
  await page.reload();  // the record stays listed; its preview now comes from the server's not-found
  await panel.getByRole("tab", { name: "Artifacts" }).click();
  await panel.getByRole("button", { name: /stats\.json/ }).click();
  await expect(panel.getByTestId("artifact-gone")).toContainText("stats.json was deleted from the workspace");

  await panel.getByRole("tab", { name: "Memory" }).click();
  await expect(panel.getByTestId("memories")).toContainText(PANEL_MEMORY.replace(/^- /, ""));
  expect(await seriousViolations(page)).toEqual([]);

  // the chosen tab and the panel's open state hold across a reload; the panel can be hidden and shown again
  await page.reload();
  await expect(panel.getByRole("tab", { name: "Memory" })).toHaveAttribute("aria-selected", "true");
  await page.getByRole("button", { name: "Hide panel" }).click();
  await expect(panel).toHaveCount(0);
  await page.reload();
  await expect(panel).toHaveCount(0);
  await page.getByRole("button", { name: "Panel", exact: true }).click();
  await expect(panel).toBeVisible();

  await page.emulateMedia({ colorScheme: "dark" });
  await panel.getByRole("tab", { name: "Artifacts" }).click();
  await panel.getByRole("button", { name: /cities\.csv/ }).click();
  await expect(panel.getByRole("figure", { name: "Table cities.csv" })).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
  await shot("session-panel-dark");
});

test("at 390 px the panel is a drawer over the conversation, without horizontal scroll", async ({ page, shot }) => {
  await runPanelTurn(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  const panel = page.getByRole("complementary", { name: "Session panel" });
  await expect(panel).toHaveCount(0); // closed by default on a narrow screen
  await page.getByRole("button", { name: "Panel", exact: true }).click();
  await expect(panel).toBeVisible();
  const box = (await panel.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.width).toBeLessThanOrEqual(390);
  await panel.getByRole("tab", { name: "Artifacts" }).click();
  await panel.getByRole("button", { name: /cities\.csv/ }).click();
  await expect(panel.getByRole("figure", { name: "Table cities.csv" })).toBeVisible();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  expect(await seriousViolations(page)).toEqual([]);
  await shot("session-panel-390");
  await panel.getByRole("button", { name: "Close the session panel" }).click();
  await expect(panel).toHaveCount(0);
  await expect(page.getByLabel("Current turn").getByTestId("answer")).toBeVisible();
});
