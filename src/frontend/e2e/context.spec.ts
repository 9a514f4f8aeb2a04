import { expect, test } from "./fixtures";
import { HELD_MARKER, HELD_NONE, HELD_SEEN, HELD_TASK } from "./scenarios";

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

test("a session is titled from its first task and renamed inline in the header", async ({ page }) => {
  await page.goto("/app/workspace");
  await page.getByRole("button", { name: "+ New session" }).click();
  await expect(page).toHaveURL(/\/app\/workspace\/\w+/);
  await page.getByRole("textbox", { name: /^Task/ }).fill("Summarize the quarterly numbers\nwith a table");
  await page.getByRole("button", { name: "Run ▶" }).click();
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Summarize the quarterly numbers");
  await page.getByRole("button", { name: "Rename this session" }).click();
  await page.getByRole("textbox", { name: "Session title" }).fill("Q3 numbers");
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Q3 numbers");
  await expect(page.getByRole("complementary", { name: "Sessions" }).getByRole("link", { name: "Q3 numbers" })).toBeVisible();
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
  // delete offers Undo; undone, the session is back; deleted for real once the undo window closes
  await list.getByRole("button", { name: "Delete Zebra research" }).click();
  await expect(list.getByText("No session matches.")).toBeVisible();
  await list.getByTestId("undo-delete").getByRole("button", { name: "Undo" }).click();
  await expect(list.getByRole("link", { name: "Zebra research" })).toBeVisible();
  await list.getByRole("button", { name: "Delete Zebra research" }).click();
  await expect(list.getByTestId("undo-delete")).toHaveCount(0, { timeout: 10_000 });
  await page.reload();
  await page.getByLabel("Search sessions").fill("zebra");
  await expect(list.getByText("No session matches.")).toBeVisible();
});

test("a file attached on turn 1 stays in the session's context until removed in the Context panel", async ({ page, shot }) => {
  test.setTimeout(150_000); // three rlm turns on a shared 2-core machine
  const run = async (n: number) => {
    await page.getByRole("textbox", { name: /^Task/ }).fill(HELD_TASK);
    await page.getByRole("combobox", { name: "Mode" }).selectOption("rlm");
    await page.getByRole("button", { name: "Run ▶" }).click();
    await expect(page.getByRole("article", { name: /^Turn \d+$/ })).toHaveCount(n - 1, { timeout: 45_000 }); // earlier turns
    const panel = page.getByRole("article", { name: "Current turn" }).getByTestId("run-panel");
    await expect(panel).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
    return panel.getByTestId("answer");
  };
  await page.goto("/app/workspace");
  await page.getByTestId("file-input").setInputFiles({ name: "sales.csv", mimeType: "text/csv", buffer: Buffer.from(`region,amount\nnorth,${HELD_MARKER}\n`) });
  await expect(page.getByLabel("Attachments")).toContainText("sales.csv");
  await expect(await run(1)).toContainText(HELD_SEEN);
  await expect(page).toHaveURL(/\/app\/workspace\/[\w-]+$/);
  await expect(page.getByLabel("Attachments")).not.toContainText("sales.csv"); // nothing staged for the follow-up

  await expect(await run(2)).toContainText(HELD_SEEN); // the follow-up reads the file without re-uploading it

  const side = page.getByRole("complementary", { name: "Session panel" });
  const item = side.getByTestId("context-item").filter({ hasText: "sales.csv" });
  await expect(item).toContainText("turn 1");
  await shot("session-context-held", { doc: "workspace/session-context-held" });
  await item.getByRole("button", { name: "Remove sales.csv from the session" }).click();
  await expect(side.getByTestId("context-item")).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole("complementary", { name: "Session panel" }).getByText(/No context in this session yet/)).toBeVisible();

  await expect(await run(3)).toContainText(HELD_NONE); // removed: the next turn no longer has it
  await shot("session-context-removed");
});
