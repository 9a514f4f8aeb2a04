// The REPL variables panel: after each cell the step detail lists the globals the cell left (name, type, size,
// preview) and what changed since the previous cell; a preview is hostile text and is shown as text.
import AxeBuilder from "@axe-core/playwright";
import { expect, newSessionWithTask, test } from "./fixtures";
import { HOSTILE_PREVIEW, VARS_TASK } from "./scenarios";

test("the variables panel shows a variable a cell made and the next cell changed", async ({ page, shot }) => {
  await newSessionWithTask(page, VARS_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-outcome", "succeeded", { timeout: 45_000 });
  const title = await page.title();
  const cells = run.getByRole("tree", { name: "Run steps" }).locator('[role="treeitem"][data-kind="code"]');
  await expect(cells).toHaveCount(3); // make, change, SUBMIT

  await cells.nth(0).click();
  const detail = run.getByTestId("node-detail");
  const panel = detail.getByTestId("variables");
  const variable = (name: string) => panel.locator(`[data-testid="variable"][data-name="${name}"]`);
  await expect(panel).toContainText("7 variables · 4 new");
  for (const name of ["notes", "count", "scratch", "label"]) await expect(variable(name)).toHaveAttribute("data-change", "new");
  // the turn's inputs (task, context, history) were there before the cell: listed after, marked input
  await expect(variable("task")).toHaveAttribute("data-change", "same");
  await expect(variable("task")).toContainText("input");
  await expect(variable("notes")).toContainText("list");
  await expect(variable("notes")).toContainText("len 1");
  await expect(variable("notes").getByTestId("variable-preview")).toHaveText("['alpha']");
  // the HTML a cell put in a string is shown as its text, never parsed
  await expect(variable("label").getByTestId("variable-preview")).toContainText(HOSTILE_PREVIEW);
  await expect(detail.locator("img")).toHaveCount(0);
  expect(await page.title()).toBe(title);

  await cells.nth(1).click();
  await expect(panel).toContainText("6 variables · 2 changed, 1 removed");
  await expect(variable("notes")).toHaveAttribute("data-change", "changed");
  await expect(variable("notes").getByTestId("variable-preview")).toHaveText("['alpha', 'beta']");
  await expect(variable("notes")).toContainText("was (len 1) ['alpha']");
  await expect(variable("count")).toHaveAttribute("data-change", "changed");
  await expect(variable("scratch")).toHaveAttribute("data-change", "removed");
  await expect(variable("label")).toHaveAttribute("data-change", "same");
  await page.setViewportSize({ width: 1280, height: 1000 });
  await panel.scrollIntoViewIfNeeded();
  await shot("run-variables", { doc: "workspace/run-variables" });
  await panel.getByRole("button", { name: "Changes only" }).click();
  await expect(variable("label")).toHaveCount(0);
  await expect(variable("notes")).toBeVisible();

  // the same is there after a reload (rebuilt from the stored events), and via the iteration's detail
  await page.reload();
  const again = page.getByTestId("run-panel").last();
  await again.getByRole("treeitem").filter({ hasText: "Iteration 2" }).first().click();
  await expect(again.getByTestId("node-detail").getByTestId("variables")).toContainText("2 changed, 1 removed");

  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  const serious = axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
});
