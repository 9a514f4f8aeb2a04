// The run tree on a time axis: a depth-2 run with parallel children as a nested tree, the step detail, deep
// links, the recursion graph, Stop from a scrolled timeline, a partial run, and the 390 px layout.
import AxeBuilder from "@axe-core/playwright";
import { expect, newSessionWithTask, state, test } from "./fixtures";
import { FAIL_TASK, FAN_OUT_ANSWER, FAN_OUT_TASK, LOOP_TASK } from "./scenarios";

async function setOverrides(body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${state().baseUrl}/api/v1/runtime/settings`, {
    method: "PATCH",
    headers: { "content-type": "application/json", origin: state().baseUrl },
    body: JSON.stringify(body),
  });
  expect(res.ok, await res.text()).toBe(true);
}

test("a depth-2 run with parallel children renders as a nested tree with a step detail and deep links", async ({ page, shot }) => {
  test.setTimeout(150_000);
  await newSessionWithTask(page, FAN_OUT_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-outcome", "succeeded", { timeout: 45_000 });
  await expect(run.getByTestId("answer")).toContainText(FAN_OUT_ANSWER);
  const tree = run.getByRole("tree", { name: "Run steps" });
  const rows = tree.getByRole("treeitem");
  // collapse everything, then open the path root iteration → cell → rlm_query_batched → children
  await run.getByRole("button", { name: "Collapse all" }).click();
  await expect(tree.locator('[data-kind="child"]')).toHaveCount(0);
  await tree.getByRole("button", { name: "Expand Iteration 1" }).first().click();
  await tree.getByRole("button", { name: "Expand REPL cell" }).first().click();
  await tree.getByRole("button", { name: "Expand rlm_query_batched" }).click();
  const children = tree.locator('[role="treeitem"][data-kind="child"]');
  await expect(children).toHaveCount(3); // three parallel children at depth 1
  const gamma = children.filter({ hasText: "branch gamma" });
  await gamma.getByRole("button", { name: /^Expand Child RLM/ }).click();
  await expect(rows.filter({ hasText: "Iteration 1" })).toHaveCount(2); // root's and gamma's own
  await tree.getByRole("button", { name: "Expand Iteration 1" }).last().click();
  await tree.getByRole("button", { name: "Expand REPL cell" }).last().click();
  await tree.getByRole("button", { name: "Expand rlm_query" }).click();
  await expect(children).toHaveCount(4); // the grandchild at depth 2, nested under gamma's rlm_query
  const levels = await children.evaluateAll((els) => els.map((r) => Number(r.getAttribute("aria-level"))));
  const [shallow, deep] = [Math.min(...levels), Math.max(...levels)];
  expect(levels.filter((l) => l === shallow)).toHaveLength(3);
  expect(deep).toBeGreaterThan(shallow + 2);
  await expect(children.filter({ hasText: "leaf delta" })).toHaveAttribute("aria-level", String(deep));
  await shot("run-tree", { doc: "workspace/run-tree" });

  await gamma.click();
  const detail = run.getByTestId("node-detail");
  await expect(detail).toContainText("Child RLM · depth 1");
  await expect(detail).toContainText("gamma: delta says ok");
  await expect(page).toHaveURL(/\?run=\w+&node=\w+/);
  await detail.evaluate((el) => el.scrollIntoView({ block: "start" })); // the picture shows the detail, not only the tree
  await shot("run-tree-detail", { doc: "workspace/run-tree-detail" });
  // a child RLM's cell lists the variables of the child's own REPL
  await tree.locator('[role="treeitem"][data-kind="code"]').filter({ hasText: "M-GAMMA-DONE" }).click();
  await expect(detail.locator('[data-testid="variable"][data-name="d"]')).toHaveAttribute("data-change", "new");
  await gamma.click();
  await run.getByRole("button", { name: "Expand all" }).click();
  await expect(tree.locator('[role="treeitem"][data-kind="batch"]').first()).toContainText("2/2 done");

  // the link opens the same step after a reload
  await page.reload();
  await expect(page.getByTestId("node-detail")).toContainText("gamma: delta says ok", { timeout: 30_000 });

  // a sub-LM call shows its prompt and response
  await page.getByRole("treeitem").filter({ hasText: "summarize part two" }).first().click();
  await expect(page.getByTestId("node-detail")).toContainText("Prompt");
  await expect(page.getByTestId("node-detail")).toContainText("A short sub-LM answer.");

  await page.getByRole("button", { name: "Recursion graph" }).click();
  const graph = page.getByTestId("recursion-graph");
  await expect(graph.locator(".react-flow__node")).toHaveCount(5);
  await expect(graph.locator(".react-flow__edge")).toHaveCount(4);
  await shot("run-graph", { doc: "workspace/run-graph" });

  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  const serious = axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
});

test("Stop stays reachable from a scrolled timeline (button and Esc)", async ({ page, shot }) => {
  await newSessionWithTask(page, LOOP_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run.locator('[role="treeitem"][data-kind="iteration"]').nth(1)).toBeVisible({ timeout: 30_000 });
  await page.locator(".conversation .scroll").evaluate((el) => el.scrollTo(0, 0));
  const bar = page.getByTestId("run-bar");
  await expect(bar.getByRole("button", { name: "Stop run" })).toBeInViewport();
  await shot("run-stop-bar", { doc: "workspace/run-stop-bar" });
  await page.keyboard.press("Escape");
  await expect(run).toHaveAttribute("data-outcome", "cancelled", { timeout: 45_000 });
  await expect(bar).toHaveCount(0);
});

test("a run stopped by a limit is partial (amber, the limit named), not done", async ({ page, shot }) => {
  await setOverrides({ max_llm_calls: 3 });
  try {
    await newSessionWithTask(page, LOOP_TASK, "rlm");
    const run = page.getByTestId("run-panel").last();
    await expect(run).toHaveAttribute("data-outcome", "partial", { timeout: 45_000 });
    await expect(run.getByTestId("run-phase")).toHaveText("partial");
    await expect(run.getByTestId("partial-reason")).toContainText("the LM call limit");
    await expect(run.getByTestId("cost")).toHaveText(/^\$/);
    await expect(run.getByRole("button", { name: "Retry" })).toBeVisible();
    await run.getByTestId("run-phase").scrollIntoViewIfNeeded();
    await shot("run-partial", { doc: "workspace/run-partial" });
  } finally {
    await setOverrides({ max_llm_calls: null });
  }
});

test("390 px: the workspace and the run tree fit without horizontal scrolling", async ({ page, shot }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await newSessionWithTask(page, FAN_OUT_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-outcome", "succeeded", { timeout: 45_000 });
  await run.getByRole("treeitem").filter({ hasText: "leaf alpha" }).first().click();
  await expect(run.getByTestId("node-detail")).toBeVisible();
  for (const path of ["", "/app/optimization", "/app/volumes", "/app/settings"]) {
    if (path) await page.goto(path);
    const [scroll, width] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    expect(scroll, `horizontal scroll on ${path || "workspace"}`).toBeLessThanOrEqual(width);
    if (!path) await shot("workspace-390", { doc: "workspace/workspace-390" });
  }
});

test("a failed turn keeps the task in the composer and Retry starts a new run", async ({ page, shot }) => {
  await newSessionWithTask(page, FAIL_TASK, "rlm");
  const run = page.getByTestId("run-panel").last();
  await expect(run).toHaveAttribute("data-outcome", "failed", { timeout: 45_000 });
  await expect(run.getByRole("alert").first()).toContainText("lm_bad_request");
  await expect(page.getByRole("textbox", { name: /^Task/ })).toHaveValue(FAIL_TASK);
  await expect(page.getByRole("combobox", { name: "Mode" })).toHaveValue("rlm");
  await shot("run-failed-retry", { doc: "workspace/run-failed-retry" });
  const sessionId = /workspace\/(\w+)/.exec(page.url())![1];
  await run.getByRole("button", { name: "Retry" }).click();
  await expect.poll(async () => {
    const turns = await (await fetch(`${state().baseUrl}/api/v1/sessions/${sessionId}/turns`)).json();
    return turns.total as number;
  }, { timeout: 30_000 }).toBe(2);
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-outcome", "failed", { timeout: 45_000 });
  // the mode chosen for this session survives a reload
  await page.reload();
  await expect(page.getByRole("combobox", { name: "Mode" })).toHaveValue("rlm");
});

test("an unknown page under /app says so instead of showing the workspace", async ({ page }) => {
  await page.goto("/app/no-such-page");
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  await expect(page.getByText("/app/no-such-page")).toBeVisible();
  await page.getByRole("link", { name: "Workspace" }).last().click();
  await expect(page).toHaveURL(/\/app\/workspace$/);
});
