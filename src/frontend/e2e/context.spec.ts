import { expect, test } from "./fixtures";

test("an attached file is uploaded and loaded as context", async ({ page }) => {
  await page.goto("/app/workspace");
  await page.getByTestId("file-input").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("The secret number is 42.\n") });
  await expect(page.getByLabel("Attachments")).toContainText("notes.txt");
  await page.getByRole("textbox", { name: /^Task/ }).fill("What is the secret number in my notes?");
  await page.getByRole("combobox", { name: "Mode" }).selectOption("rlm");
  await page.getByRole("button", { name: "Run ▶" }).click();
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  await expect(run.getByText(/notes\.txt/).first()).toBeVisible();
});

test("sessions can be searched, renamed and deleted", async ({ page }) => {
  await page.goto("/app/workspace");
  await page.getByRole("button", { name: "+ New session" }).click();
  await expect(page).toHaveURL(/\/app\/workspace\/\w+/);
  await page.getByRole("button", { name: "Rename Untitled session" }).first().click();
  await page.getByLabel("Session title").fill("Zebra research");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByLabel("Search sessions").fill("zebra");
  const list = page.getByRole("complementary", { name: "Sessions" });
  await expect(list.getByRole("link")).toHaveCount(1);
  page.once("dialog", (d) => void d.accept());
  await list.getByRole("button", { name: "Delete Zebra research" }).click();
  await expect(list.getByText("No session matches.")).toBeVisible();
});
