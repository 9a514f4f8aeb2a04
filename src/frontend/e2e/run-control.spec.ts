import { expect, newSessionWithTask, state, test } from "./fixtures";
import { LOOP_TASK } from "./scenarios";

async function lastSeqOf(runId: string): Promise<number> {
  const run = await (await fetch(`${state().baseUrl}/api/v1/runs/${runId}`)).json();
  return run.last_seq as number;
}

async function eventTypes(runId: string): Promise<string[]> {
  const page = await (await fetch(`${state().baseUrl}/api/v1/runs/${runId}/events?limit=1000`)).json();
  return (page.items as { type: string }[]).map((e) => e.type);
}

test("Stop ends a running turn", async ({ page, shot }) => {
  await newSessionWithTask(page, LOOP_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await run.getByRole("button", { name: "Stop", exact: true }).click();
  await expect(run).toHaveAttribute("data-phase", "cancelled", { timeout: 45_000 });
  await expect(run.getByTestId("run-phase")).toHaveText("cancelled");
  await shot("workspace-cancelled");
});

test("reloading mid-run resumes the stream without lost or doubled steps", async ({ page, shot }) => {
  let runId = "";
  page.on("websocket", (ws) => {
    const match = /run_id=(\w+)/.exec(ws.url());
    if (match) runId = match[1];
  });
  await newSessionWithTask(page, "Explore the context step by step", "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run.getByText(/^Steps \([1-9]/)).toBeVisible();
  await page.reload();
  const resumed = page.getByTestId("run-panel").last();
  await expect(resumed).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  expect(runId).not.toBe("");
  const total = await lastSeqOf(runId);
  await expect(resumed.getByText(`Steps (${total} events)`)).toBeVisible();
  const codeEvents = (await eventTypes(runId)).filter((t) => t === "code").length;
  await expect(resumed.locator('[role="treeitem"][data-kind="code"]')).toHaveCount(codeEvents);
  await expect(resumed.getByTestId("answer")).toContainText("42");
  await shot("workspace-resumed");
});
