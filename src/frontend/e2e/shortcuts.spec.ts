// The keyboard shortcuts help (?, Esc) lists the app's shortcuts, and the listed ones work: focus the task box,
// go to a page, focus the run tree and walk it with the arrow keys, Home and End.
import AxeBuilder from "@axe-core/playwright";
import { expect, newSessionWithTask, test } from "./fixtures";
import { LOOP_TASK, VARS_TASK } from "./scenarios";

test("? opens the shortcuts help, Esc closes it, and the listed shortcuts work", async ({ page, shot }) => {
  test.setTimeout(120_000);
  await newSessionWithTask(page, VARS_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-outcome", "succeeded", { timeout: 45_000 });
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur()); // the focus leaves the task box

  await page.keyboard.press("?");
  const help = page.getByRole("dialog", { name: "Keyboard shortcuts" });
  await expect(help).toBeVisible();
  for (const what of ["Focus the task box", "Go to Settings", "Stop the active run", "Run the task", "First / last step", "Collapse the step, or go to its parent"]) {
    await expect(help).toContainText(what);
  }
  await shot("shortcuts-help", { doc: "workspace/shortcuts-help" });
  const axe = await new AxeBuilder({ page }).include("[role=dialog]").withTags(["wcag2a", "wcag2aa"]).analyze();
  expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)).toEqual([]);
  await page.keyboard.press("Escape");
  await expect(help).toHaveCount(0);

  // t focuses the run tree; the arrows, Home and End move the selection (the step detail follows)
  await page.keyboard.press("t");
  const tree = run.getByRole("tree", { name: "Run steps" });
  await expect(tree).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(tree.locator('[aria-selected="true"]')).toHaveAttribute("data-kind", "run");
  await page.keyboard.press("End");
  await expect(tree.locator('[aria-selected="true"]')).toHaveAttribute("data-kind", "code");
  await expect(run.getByTestId("node-detail")).toContainText("SUBMIT");
  await page.keyboard.press("ArrowLeft"); // a leaf: to its parent
  await expect(tree.locator('[aria-selected="true"]')).toContainText("Iteration 3");
  await page.keyboard.press("ArrowLeft"); // an open parent: collapses it
  await expect(tree.locator('[aria-selected="true"]')).toHaveAttribute("aria-expanded", "false");
  await page.keyboard.press("ArrowRight");
  await expect(tree.locator('[aria-selected="true"]')).toHaveAttribute("aria-expanded", "true");
  await page.keyboard.press("Home");
  await expect(tree.locator('[aria-selected="true"]')).toHaveAttribute("data-kind", "run");

  // / focuses the task box; typing there never triggers a shortcut
  await page.keyboard.press("/");
  const task = page.getByRole("textbox", { name: /^Task/ });
  await expect(task).toBeFocused();
  await page.keyboard.type("g s ?");
  await expect(task).toHaveValue("g s ?");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await expect(page).toHaveURL(/\/app\/workspace\//);
  await task.fill("");

  // g then a letter goes to a page; the help opens there too, and from the top bar's button
  await tree.focus();
  await page.keyboard.press("g");
  await page.keyboard.press("s");
  await expect(page).toHaveURL(/\/app\/settings$/);
  await page.keyboard.press("g");
  await page.keyboard.press("v");
  await expect(page).toHaveURL(/\/app\/volumes$/);
  await page.getByRole("button", { name: "Keyboard shortcuts" }).click();
  await expect(help).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(help).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Keyboard shortcuts" })).toBeFocused(); // focus comes back
});

test("Esc closes the help without stopping the active run, then stops it", async ({ page }) => {
  await newSessionWithTask(page, LOOP_TASK, "rlm");
  const bar = page.getByTestId("run-bar");
  await expect(bar).toBeVisible({ timeout: 30_000 });
  await page.getByRole("button", { name: "Keyboard shortcuts" }).click();
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await expect(bar).toBeVisible();
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "running");
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-outcome", "cancelled", { timeout: 45_000 });
});
