import { ANSWER } from "./servers";
import { expect, newSessionWithTask, test } from "./fixtures";

const answerText = ANSWER.replace(/\*\*/g, "");

test("a turn streams its steps to the final Markdown answer, with usage and feedback", async ({ page, shot }) => {
  await newSessionWithTask(page, "What is six times seven?", "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run.getByTestId("answer")).toContainText(answerText, { timeout: 45_000 });
  await expect(run.getByTestId("answer").locator("strong")).toHaveText("42");
  await expect(run).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  await expect(run.getByTestId("lm-calls")).not.toHaveText("0");
  await expect(run.locator('[role="treeitem"][data-kind="code"]').first()).toBeVisible();
  await shot("workspace-answer");

  await run.getByRole("button", { name: "Bad" }).click();
  await run.getByLabel("Expected answer (optional)").fill("6 × 7 = 42");
  await run.getByRole("button", { name: "Send feedback" }).click();
  await expect(run.getByText("Thanks — feedback saved.")).toBeVisible();
});
