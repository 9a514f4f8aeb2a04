import { expect, state, test } from "./fixtures";

// A profile's HTTP headers are secrets: the page shows their names with a "set" marker, never a value; the
// value typed once reaches the LM endpoint; an edit replaces one and removes another.
const ORG = "org-e2e-secret-2468";
const TOKEN = "tok-e2e-secret-1357";
const ROTATED = "tok-e2e-rotated-9753";

async function lmHeaders(): Promise<Record<string, string>> {
  const { requests } = await (await fetch(`${state().lmUrl}/_fake/requests`)).json();
  return requests.at(-1)?.headers ?? {};
}

test("settings: profile headers are set once, shown by name and sent to the endpoint", async ({ page, shot }) => {
  await page.goto("/app/settings");
  const form = page.getByRole("form", { name: "New LLM profile" });
  await form.getByLabel("Profile name").fill("headers-e2e");
  await form.getByLabel("Model (provider/model)").fill("openai/fake-model");
  await form.getByLabel("API base URL (optional)").fill(state().lmUrl);
  for (const [name, value] of [["X-Org", ORG], ["X-Token", TOKEN]]) {
    await form.getByRole("button", { name: "Add header" }).click();
    await form.getByLabel("Header name").last().fill(name);
    await form.getByLabel(`Value of ${name}`).fill(value);
  }
  await expect(form.getByLabel("Value of X-Org")).toHaveAttribute("type", "password");
  await form.getByRole("button", { name: "Add profile" }).click();

  const row = page.getByRole("table", { name: "LLM profiles" }).getByRole("row").filter({ hasText: "headers-e2e" });
  await expect(row).toContainText("X-Org set");
  await expect(row).toContainText("X-Token set");
  await row.getByRole("button", { name: "Test headers-e2e" }).click();
  // A profile with headers runs on LiteLLM, which the server imports at its first such call (seconds on a busy CI).
  await expect(page.getByTestId("profile-test")).toContainText("ok", { timeout: 60_000 });
  const sent = await lmHeaders();
  expect([sent["x-org"], sent["x-token"]]).toEqual([ORG, TOKEN]);
  await shot("settings-profile-headers");

  await row.getByRole("button", { name: "Edit headers-e2e" }).click();
  const edit = page.getByRole("form", { name: "Edit profile headers-e2e" });
  const headers = edit.getByRole("list", { name: "Headers" });
  await expect(headers.getByText("set")).toHaveCount(2);
  await expect(edit.getByLabel("New value for X-Token (empty keeps it)")).toHaveValue("");
  await edit.getByLabel("New value for X-Token (empty keeps it)").fill(ROTATED);
  await edit.getByRole("button", { name: "Remove header X-Org" }).click();
  await shot("settings-profile-headers-edit");
  const patch = page.waitForRequest((r) => r.method() === "PATCH" && r.url().includes("/api/v1/llm-profiles/"));
  await edit.getByRole("button", { name: "Save changes" }).click();
  expect((await patch).postDataJSON()).toEqual({ extra_headers: { "X-Token": ROTATED } });
  await expect(row).not.toContainText("X-Org");
  await fetch(`${state().lmUrl}/_fake/clear`, { method: "POST" });
  await row.getByRole("button", { name: "Test headers-e2e" }).click();
  await expect.poll(async () => (await lmHeaders())["x-token"]).toBe(ROTATED);
  expect((await lmHeaders())["x-org"]).toBeUndefined();

  const html = await page.content();
  for (const value of [ORG, TOKEN, ROTATED]) expect(html).not.toContain(value);
});
