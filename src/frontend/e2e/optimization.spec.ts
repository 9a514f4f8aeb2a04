import { expect, state, test } from "./fixtures";

interface ModuleInfo {
  name: string;
  required_keys: string[];
}

test("optimization: upload a dataset for `direct`, run GEPA on a tiny budget, read its results, promote it", async ({ page, shot }) => {
  test.setTimeout(150_000);
  const modules = (await (await fetch(`${state().baseUrl}/api/v1/optimization/modules`)).json()) as ModuleInfo[];
  const keys = modules.find((m) => m.name === "direct")!.required_keys;
  expect(keys).toEqual(["task", "answer"]);
  const row = (task: string, answer: string) => JSON.stringify(Object.fromEntries(keys.map((k) => [k, k === "task" ? task : answer])));

  await page.goto("/app/optimization");
  const upload = page.getByRole("form", { name: "Upload dataset" });
  await upload.getByLabel("Module").selectOption("direct");

  // A file with a bad row: previewed and flagged in the browser, then rejected by the server with row errors.
  const bad = [row("What is 6 x 7?", "42"), JSON.stringify({ task: "What is 40 + 2?" })].join("\n");
  await upload.getByTestId("dataset-file").setInputFiles({ name: "broken.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(bad) });
  await expect(upload.getByRole("table", { name: "Dataset preview" })).toContainText("What is 6 x 7?");
  await expect(upload.getByRole("alert", { name: "Row errors" }).first()).toContainText("line 2: missing key(s): answer");
  await expect(upload.getByRole("button", { name: "Upload dataset" })).toBeDisabled();

  const good = ["6 x 7", "40 + 2", "84 / 2", "50 - 8", "21 * 2", "44 - 2"].map((q) => row(`What is ${q}?`, "42")).join("\n") + "\n";
  await upload.getByTestId("dataset-file").setInputFiles({ name: "answers.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(good) });
  await upload.getByLabel("Dataset name").fill("e2e-answers");
  await expect(upload.getByRole("alert")).toHaveCount(0);
  await upload.getByRole("button", { name: "Upload dataset" }).click();
  await expect(upload.getByRole("status")).toContainText("Uploaded “e2e-answers” (6 rows)");
  await expect(page.getByRole("table", { name: "Datasets" })).toContainText("e2e-answers");

  const start = page.getByRole("form", { name: "Start a run" });
  await start.getByLabel("Module to optimize").selectOption("direct");
  await start.getByLabel("Dataset").selectOption({ label: "e2e-answers (6 rows)" });
  await start.getByRole("radio", { name: "max metric calls" }).check();
  await start.getByRole("spinbutton", { name: "Metric-call budget" }).fill("4");
  await start.getByRole("button", { name: "Start optimization" }).click();
  await expect(page).toHaveURL(/[?&]run=\w+/);

  const detail = page.getByTestId("opt-run-detail");
  await expect(detail.getByLabel("Run progress")).toBeVisible();
  await expect(detail).toHaveAttribute("data-status", "succeeded", { timeout: 120_000 });
  await expect(detail.getByTestId("opt-score")).not.toHaveText("–");
  const results = detail.getByRole("table", { name: "Per-example results" });
  await expect(results).toContainText("42");
  // real columns (one per field), not JSON blobs; a row opens the baseline/optimized diff
  await expect(results.getByRole("columnheader", { name: "task" })).toBeVisible();
  await expect(results.getByRole("columnheader", { name: "expected answer" })).toBeVisible();
  await expect(results).not.toContainText('{"task"');
  await results.getByRole("button", { name: "Diff: compare outputs of example 0" }).click();
  await expect(results.getByTestId("example-compare")).toContainText("Baseline");
  // the page is live: the status counters refresh when the run ends, no reload
  await expect(page.getByLabel("Optimization status")).toContainText("Active runs 0");
  await detail.getByText("Markdown report").click();
  await expect(detail.getByTestId("opt-report").getByRole("heading", { name: "Optimization report: direct" })).toBeVisible();

  // a finished run says so: a full bar, and how many metric calls it made of its budget
  await expect(detail.getByTestId("opt-finished")).toContainText(/Finished after \d+ metric call/);
  await expect(detail.getByRole("progressbar", { name: "Run finished" })).toHaveAttribute("aria-valuenow", "100");

  // Promotion shows the candidate beside the current version on the same validation rows; the fake model
  // answers the same whatever the instructions, so the candidate is not better and needs "Promote anyway".
  const promoteButton = detail.getByRole("button", { name: /^Promote direct-v\d+$/ });
  await promoteButton.click();
  const dialog = page.getByRole("dialog", { name: /^Promote direct-v\d+\?$/ });
  const scores = dialog.getByRole("table", { name: "Promotion scores" });
  await expect(scores).toContainText("(this run)");
  await expect(scores).toContainText("builtin-1 (current)");
  await expect(dialog.getByTestId("candidate-score")).toHaveText(/^\d\.\d{3}$/);
  await expect(dialog.getByTestId("current-score")).toHaveText(/^\d\.\d{3}$/);
  await expect(dialog.getByRole("alert")).toContainText("Not better than builtin-1");
  await expect(dialog.getByRole("button", { name: "Promote", exact: true })).toHaveCount(0);
  await shot("optimization-promote-dialog");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
  await expect(detail.getByTestId("promoted-badge")).toHaveCount(0);
  await promoteButton.click();
  await page.getByRole("dialog").getByRole("button", { name: "Promote anyway" }).click();
  await expect(detail.getByTestId("promoted-badge")).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("opt-run-detail").getByTestId("promoted-badge")).toBeVisible();
  await expect(page.getByRole("table", { name: "Program versions" })).toContainText("promoted");
  await expect(page.getByRole("table", { name: "Optimization runs" })).toContainText("succeeded");
  await detail.scrollIntoViewIfNeeded();
  await shot("optimization-run");
  await page.locator("#main").evaluate((el) => el.scrollTo(0, 0));
  await shot("optimization-overview");
});
