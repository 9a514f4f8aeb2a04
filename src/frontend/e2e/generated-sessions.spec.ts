// Generated sessions (one per bench task) stay out of the sidebar until "Show generated" is ticked; the toggle
// holds across a reload.
import { expect, state, test } from "./fixtures";

async function createSession(title: string, origin: "user" | "bench"): Promise<void> {
  const response = await fetch(`${state().baseUrl}/api/v1/sessions`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ title, origin }),
  });
  expect(response.status).toBe(201);
}

test("generated sessions are hidden until Show generated is ticked, and the choice holds on reload", async ({ page, shot }) => {
  const stamp = Date.now();
  await createSession(`my notes ${stamp}`, "user");
  await createSession(`bench: needle ${stamp}`, "bench");
  await page.goto("/app/workspace");
  const sidebar = page.getByRole("complementary", { name: "Sessions" });
  await expect(sidebar.getByRole("link", { name: `my notes ${stamp}` })).toBeVisible();
  await expect(sidebar.getByRole("link", { name: new RegExp(`bench: needle ${stamp}`) })).toHaveCount(0);

  const toggle = sidebar.getByRole("checkbox", { name: "Show generated" });
  await expect(toggle).not.toBeChecked();
  await toggle.check();
  const bench = sidebar.getByRole("link", { name: new RegExp(`bench: needle ${stamp}`) });
  await expect(bench).toBeVisible();
  await expect(bench.getByText("bench", { exact: true })).toBeVisible();
  await shot("sidebar-show-generated");

  await page.reload();
  await expect(sidebar.getByRole("checkbox", { name: "Show generated" })).toBeChecked();
  await expect(bench).toBeVisible();
  await sidebar.getByRole("checkbox", { name: "Show generated" }).uncheck();
  await expect(bench).toHaveCount(0);
  await expect(sidebar.getByRole("link", { name: `my notes ${stamp}` })).toBeVisible();
});

test("a first turn the server refuses leaves no session behind", async ({ page }) => {
  const count = async () =>
    ((await (await fetch(`${state().baseUrl}/api/v1/sessions?include=generated&limit=1`)).json()) as { total: number }).total;
  const before = await count();
  await page.goto("/app/workspace");
  await page.getByRole("textbox", { name: /^Task/ }).fill("read the page");
  await page.locator("summary", { hasText: "Context" }).first().click();
  await page.getByLabel("URLs (one per line)").fill("ftp://example.com/notes.txt");
  await page.getByRole("button", { name: "Run ▶" }).click();
  await expect(page.getByText(/only http and https URLs/)).toBeVisible();
  await expect(page).toHaveURL(/\/app\/workspace$/);
  expect(await count()).toBe(before);
});
