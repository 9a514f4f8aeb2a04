import { expect, test } from "./fixtures";

test("volumes: browse the workspace and open memory/MEMORIES.md", async ({ page, shot }) => {
  await page.goto("/app/volumes");
  const files = page.getByRole("navigation", { name: "Files" });
  await files.getByRole("button", { name: /MEMORIES\.md/ }).click();
  const viewer = page.getByRole("article", { name: /File memory\/MEMORIES\.md/ });
  await expect(viewer).toBeVisible();
  await expect(viewer.getByRole("button", { name: "Download" })).toBeVisible();
  await shot("volumes");
});

test("settings: health shows the database, isolation and model", async ({ page, shot }) => {
  await page.goto("/app/settings");
  await expect(page.getByRole("table", { name: "Readiness checks" })).toContainText("database");
  await expect(page.getByTestId("isolation")).not.toBeEmpty();
  await expect(page.getByText("openai/fake-model").first()).toBeVisible();
  await shot("settings");
});

test("optimization: shows what the server offers, or says it is unavailable", async ({ page, shot }) => {
  await page.goto("/app/optimization");
  await expect(page.getByRole("heading", { name: "Optimization" })).toBeVisible();
  await expect(page.getByTestId("unavailable").or(page.getByLabel("Optimization status"))).toBeVisible();
  await shot("optimization");
});

test("deep links load the app; the dark theme applies", async ({ page, shot }) => {
  await page.goto("/app/settings");
  await page.getByRole("combobox", { name: "Theme" }).selectOption("dark");
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await page.goto("/app/workspace");
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await page.setViewportSize({ width: 420, height: 800 });
  await shot("workspace-dark-narrow");
});
