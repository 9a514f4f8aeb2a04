import { expect, state, test } from "./fixtures";

test("volumes: browse the workspace and open memory/MEMORIES.md", async ({ page, shot }) => {
  await page.goto("/app/volumes");
  const files = page.getByRole("navigation", { name: "Files" });
  await files.getByRole("button", { name: /MEMORIES\.md/ }).click();
  const viewer = page.getByRole("article", { name: /File memory\/MEMORIES\.md/ });
  await expect(viewer).toBeVisible();
  await expect(viewer.getByRole("button", { name: "Download" })).toBeVisible();
  await shot("volumes");
});

test("settings: health shows the database, isolation, model and where turns run", async ({ page, shot }) => {
  await page.goto("/app/settings");
  // one table, each fact once (it used to repeat the database and sandbox status in three tables)
  await expect(page.getByRole("region", { name: "Health" }).getByRole("table")).toHaveCount(1);
  await expect(page.getByRole("table", { name: "Server health" })).toBeVisible();
  await expect(page.getByRole("rowheader", { name: "Database" })).toHaveCount(1);
  await expect(page.getByRole("rowheader", { name: /^Sandbox/ })).toHaveCount(1);
  await expect(page.getByTestId("database")).toContainText(/ok|needs upgrade|unreachable/);
  await expect(page.getByTestId("isolation")).not.toBeEmpty();
  await expect(page.getByTestId("turn-workers")).toHaveText(/^\d+ worker process(es)?$/); // the default
  await expect(page.getByText("openai/fake-model").first()).toBeVisible();
  await shot("settings");
});

test("optimization: lists modules with their keys and the empty states", async ({ page, shot }) => {
  await page.goto("/app/optimization");
  await expect(page.getByRole("heading", { name: "Optimization", level: 1 })).toBeVisible();
  await expect(page.getByLabel("Optimization status")).toBeVisible();
  await expect(page.getByTestId("required-direct")).toHaveText("taskanswer");
  await expect(page.getByTestId("unavailable")).toHaveCount(0);
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

test("settings: create an LLM profile for the fake LM and test it", async ({ page, shot }) => {
  await page.goto("/app/settings");
  const form = page.getByRole("form", { name: "New LLM profile" });
  await form.getByLabel("Profile name").fill("fake-e2e");
  await form.getByLabel("Model (provider/model)").fill("openai/fake-model");
  await form.getByLabel("API base URL (optional)").fill(state().lmUrl);
  await form.getByLabel("API key (optional)").fill("fake");
  await form.getByRole("button", { name: "Add profile" }).click();
  const table = page.getByRole("table", { name: "LLM profiles" });
  await expect(table).toContainText("fake-e2e");
  await table.getByRole("button", { name: "Test fake-e2e" }).click();
  await expect(page.getByTestId("profile-test")).toContainText("ok");
  await page.getByRole("button", { name: "Test model" }).click();
  await expect(page.getByTestId("lm-test")).toContainText("ok");
  await shot("settings-profiles");

  // bind a role, then unbind it: "(environment / fallback)" is sent as null and sticks after a reload
  const roles = page.getByRole("table", { name: "Role bindings" });
  await roles.getByRole("combobox", { name: "Profile for sub" }).selectOption({ label: "fake-e2e" });
  await expect(roles.getByRole("combobox", { name: "Profile for sub" })).toHaveValue(/\w+/);
  await roles.getByRole("combobox", { name: "Profile for sub" }).selectOption({ label: "(environment / fallback)" });
  await page.reload();
  await expect(page.getByRole("table", { name: "Role bindings" }).getByRole("combobox", { name: "Profile for sub" })).toHaveValue("");

  // edit the profile in place (only the name changes; the stored key stays)
  await page.getByRole("table", { name: "LLM profiles" }).getByRole("button", { name: "Edit fake-e2e" }).click();
  const edit = page.getByRole("form", { name: "Edit profile fake-e2e" });
  await edit.getByLabel("Profile name").fill("fake-e2e-renamed");
  const patch = page.waitForRequest((r) => r.method() === "PATCH" && r.url().includes("/api/v1/llm-profiles/"));
  await edit.getByRole("button", { name: "Save changes" }).click();
  expect((await patch).postDataJSON()).toEqual({ name: "fake-e2e-renamed" });
  await expect(page.getByRole("table", { name: "LLM profiles" })).toContainText("fake-e2e-renamed");
});

test("settings: limits come from the server's schema and only changed values are saved", async ({ page, shot }) => {
  await page.goto("/app/settings");
  const form = page.getByRole("form", { name: "Runtime settings" });
  // the range shown and enforced is the server's (RuntimeOverrides in /openapi.json), not a number in the UI
  const spec = await (await fetch(`${state().baseUrl}/openapi.json`)).json();
  const bounds = spec.components.schemas.RuntimeOverrides.properties.turn_timeout_s.anyOf[0];
  await expect(form.getByLabel(`Turn timeout (s) (${bounds.minimum}–${bounds.maximum})`)).toHaveAttribute("min", String(bounds.minimum));
  await form.getByLabel(/^Max RLM iterations/).fill("7");
  const patch = page.waitForRequest((r) => r.method() === "PATCH" && r.url().endsWith("/api/v1/runtime/settings"));
  await form.getByRole("button", { name: "Save 1 change" }).click();
  expect((await patch).postDataJSON()).toEqual({ max_iters: 7 });
  await expect(form.getByRole("button", { name: /^Use default \(\d+\) for max_iters$/ })).toBeVisible();
  await shot("settings-runtime", { doc: "workspace/settings-runtime" });
  await form.getByRole("button", { name: /^Use default \(\d+\) for max_iters$/ }).click();
  await expect(form.getByRole("button", { name: /^Use default \(\d+\) for max_iters$/ })).toHaveCount(0);
});

test("settings: add, disable and delete an MCP server", async ({ page }) => {
  await page.goto("/app/settings");
  const form = page.getByRole("form", { name: "Add an MCP server" });
  await form.getByLabel("Name").fill("docs_e2e");
  await form.getByLabel("Streamable HTTP URL").fill("https://mcp.example.com/mcp");
  await form.getByRole("button", { name: "Add server" }).click();
  const table = page.getByRole("table", { name: "MCP servers" });
  await expect(table).toContainText("https://mcp.example.com/mcp");
  await table.getByRole("checkbox", { name: "enabled" }).click(); // saved, then shown from the server
  await expect(table.getByRole("checkbox", { name: "enabled" })).not.toBeChecked();
  await table.getByRole("button", { name: "Delete MCP server docs_e2e" }).click();
  await expect(page.getByRole("table", { name: "MCP servers" })).toHaveCount(0);
});
