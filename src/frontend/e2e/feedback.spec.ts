// Ratings are kept: rate an answer, reload and see it (under the turn and in the run tree), change it, reload
// and see the change; then rated answers become dataset rows in two clicks on the optimization page.
import { ANSWER } from "./servers";
import { expect, newSessionWithTask, test } from "./fixtures";

const answerText = ANSWER.replace(/\*\*/g, "");

test("a rating survives reloads, shows in the run tree and can be changed", async ({ page, shot }) => {
  await newSessionWithTask(page, "Rate this: what is six times seven?", "direct");
  let run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  await expect(run.getByTestId("answer")).toContainText(answerText);

  await run.getByRole("button", { name: "Good", exact: true }).click();
  await run.getByLabel("Comment (optional)").fill("clear and right");
  await run.getByRole("button", { name: "Send feedback" }).click();
  await expect(run.getByText("Thanks — feedback saved.")).toBeVisible();
  await expect(run.getByTestId("feedback-saved")).toHaveAttribute("data-rating", "up");

  await page.reload();
  run = page.getByTestId("run-panel").last();
  const saved = run.getByTestId("feedback-saved");
  await expect(saved).toHaveAttribute("data-rating", "up");
  await expect(saved.getByTestId("feedback-rating")).toHaveText("▲ Good");
  await expect(saved.getByTestId("feedback-comment")).toHaveText("“clear and right”");
  await expect(run.getByRole("button", { name: "Good", exact: true })).toHaveCount(0); // it does not ask again
  await expect(run.getByTestId("tree-feedback")).toHaveText("Rated ▲ Good");
  await shot("feedback-saved");

  await saved.getByRole("button", { name: "Change" }).click();
  await expect(run.getByRole("button", { name: "Good", exact: true })).toHaveAttribute("aria-pressed", "true");
  await expect(run.getByLabel("Comment (optional)")).toHaveValue("clear and right");
  await run.getByRole("button", { name: "Bad", exact: true }).click();
  await run.getByLabel("Comment (optional)").fill("wrong format");
  await run.getByLabel("Expected answer (optional)").fill("6 × 7 = 42");
  await shot("feedback-editing");
  await run.getByRole("button", { name: "Save changes" }).click();
  await expect(run.getByTestId("feedback-saved")).toHaveAttribute("data-rating", "down");
  await expect(run.getByTestId("tree-feedback")).toHaveText("Rated ▼ Bad");

  await page.reload();
  run = page.getByTestId("run-panel").last();
  await expect(run.getByTestId("feedback-saved")).toHaveAttribute("data-rating", "down");
  await expect(run.getByTestId("feedback-comment")).toHaveText("“wrong format”");
  await expect(run.getByTestId("feedback-expected")).toHaveText("Expected: 6 × 7 = 42");
  await expect(run.getByTestId("tree-feedback")).toHaveText("Rated ▼ Bad");
  await shot("feedback-changed");

  // cleared, it asks again (and stays cleared after a reload)
  await run.getByRole("button", { name: "Clear" }).click();
  await expect(run.getByRole("button", { name: "Good", exact: true })).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("run-panel").last().getByRole("button", { name: "Good", exact: true })).toBeVisible();
  await expect(page.getByTestId("tree-feedback")).toHaveCount(0);
});

test("rated answers become dataset rows in two clicks, ready for an optimization run", async ({ page, shot }) => {
  const task = "Dataset me: what is forty plus two?";
  await newSessionWithTask(page, task, "direct");
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  await run.getByRole("button", { name: "Good", exact: true }).click();
  await run.getByRole("button", { name: "Send feedback" }).click();
  await expect(run.getByTestId("feedback-saved")).toHaveAttribute("data-rating", "up");

  await page.goto("/app/optimization");
  const panel = page.getByRole("region", { name: "Rated answers", exact: true });
  await panel.getByLabel("Rating").selectOption("up");
  await panel.getByLabel("Mode").selectOption("direct");
  const row = panel.getByTestId("rated-run").filter({ hasText: task });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText(ANSWER); // the expected output: the answer rated good, as committed (Markdown)
  await expect(panel.locator('[data-testid="rated-run"][data-rating="down"]')).toHaveCount(0);

  await row.getByRole("checkbox").click(); // click 1
  await panel.getByRole("button", { name: "Add 1 selected to a new dataset" }).click(); // click 2
  const status = panel.getByRole("status");
  await expect(status).toContainText("with 1 row.");
  const name = /Built “([^”]+)”/.exec((await status.textContent()) ?? "")![1];
  await shot("rated-answers");

  const datasets = page.getByRole("table", { name: "Datasets" });
  await expect(datasets).toContainText(name);
  await datasets.getByRole("button", { name: `Show rows of ${name}` }).click();
  const rows = page.getByRole("table", { name: `Rows of ${name}` });
  await expect(rows).toContainText(task);
  await expect(rows).toContainText(ANSWER);
  const start = page.getByRole("form", { name: "Start a run" });
  await start.getByLabel("Module to optimize").selectOption("direct");
  await start.getByLabel("Dataset").selectOption({ label: `${name} (1 rows)` });
});
