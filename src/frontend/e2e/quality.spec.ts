// Every page at 390 px in the dark theme: no horizontal scroll (document.scrollingElement), zero serious axe
// violations; and the same axe check in the light theme at desktop width. Screenshots for the CI artifacts.
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, newSessionWithTask, test } from "./fixtures";
import { VARS_TASK } from "./scenarios";

const PAGES: [string, string][] = [
  ["/app/workspace", "New session"],
  ["/app/optimization", "Optimization"],
  ["/app/volumes", "Workspace volume"],
  ["/app/settings", "Settings"],
  ["/app/no-such-page", "Page not found"],
];

async function seriousViolations(page: Page): Promise<string[]> {
  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  return axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

async function noHorizontalScroll(page: Page, where: string): Promise<void> {
  const [scroll, width, culprits] = await page.evaluate(() => {
    const wide = Array.from(document.querySelectorAll("body *"))
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
      .filter((el) => {
        // only what reaches the page: nothing between it and the body clips or scrolls it
        for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) if (getComputedStyle(up).overflowX !== "visible") return false;
        return true;
      })
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${String((el as HTMLElement).className).slice(0, 50)}`);
    return [document.scrollingElement!.scrollWidth, window.innerWidth, wide.join(" | ")] as const;
  });
  expect(scroll, `horizontal scroll on ${where}: ${culprits}`).toBeLessThanOrEqual(width);
}

const slug = (path: string) => path.split("/").pop() || "root";

test("390 px, dark theme: every page fits without horizontal scrolling and passes axe", async ({ page, shot }) => {
  test.setTimeout(150_000);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/app/settings");
  await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  for (const [path, heading] of PAGES) {
    await page.goto(path);
    await expect(page.getByRole("heading", { name: heading, exact: true }).first()).toBeVisible();
    await page.waitForLoadState("networkidle");
    await noHorizontalScroll(page, path);
    expect(await seriousViolations(page), `axe on ${path}`).toEqual([]);
    await shot(`dark-390-${slug(path)}`);
  }
  // a finished run with its tree and the step detail open
  await newSessionWithTask(page, VARS_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-outcome", "succeeded", { timeout: 45_000 });
  await run.locator('[role="treeitem"][data-kind="code"]').nth(1).click();
  await expect(run.getByTestId("variables")).toBeVisible();
  await noHorizontalScroll(page, "a run's step detail");
  expect(await seriousViolations(page), "axe on a run").toEqual([]);
  await run.getByTestId("variables").scrollIntoViewIfNeeded();
  await shot("dark-390-run", { doc: "workspace/dark-390-run" });
  await page.getByRole("combobox", { name: "Theme" }).selectOption("system");
});

test("light theme, desktop: the pages pass axe", async ({ page }) => {
  for (const [path, heading] of PAGES) {
    await page.goto(path);
    await expect(page.getByRole("heading", { name: heading, exact: true }).first()).toBeVisible();
    await page.waitForLoadState("networkidle");
    await noHorizontalScroll(page, path);
    expect(await seriousViolations(page), `axe on ${path}`).toEqual([]);
  }
});

test("deleting an LLM profile asks in a dialog first (Cancel keeps it), then it is gone after a reload", async ({ page }) => {
  await page.goto("/app/settings");
  const form = page.getByRole("form", { name: "New LLM profile" });
  await form.getByLabel("Profile name").fill("doomed-e2e");
  await form.getByLabel("Model (provider/model)").fill("openai/fake-model");
  await form.getByRole("button", { name: "Add profile" }).click();
  const table = page.getByRole("table", { name: "LLM profiles" });
  await expect(table).toContainText("doomed-e2e");
  await table.getByRole("button", { name: "Delete doomed-e2e" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete profile doomed-e2e?" });
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
  await expect(table).toContainText("doomed-e2e");
  await table.getByRole("button", { name: "Delete doomed-e2e" }).click();
  await dialog.getByRole("button", { name: "Delete" }).click();
  await expect(page.getByRole("table", { name: "LLM profiles" }).getByText("doomed-e2e")).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole("heading", { name: "Settings", exact: true })).toBeVisible();
  await expect(page.getByText("doomed-e2e")).toHaveCount(0);
});
