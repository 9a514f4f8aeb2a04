// A session keeps what the user gave it (issue #41): a fork continues in the browser however it was made, a
// failed earlier turn reads as failed, the Context panel lists the running turn's documents, a reload shows what
// the URL and the server say, and a bad session URL says "No such session" once with a way back.
import { execFileSync } from "node:child_process";
import type { Page } from "@playwright/test";
import { expect, newSessionWithTask, state, test } from "./fixtures";
import { REPO } from "./servers";
import { FAIL_TASK, LOOP_TASK } from "./scenarios";

test.describe.configure({ timeout: 150_000 }); // several scripted runs each, on a shared 2-core machine

const sessionIdOf = (page: Page) => /\/app\/workspace\/([\w-]+)/.exec(page.url())![1];
const task = (page: Page) => page.getByRole("textbox", { name: /^Task/ });
const runButton = (page: Page) => page.getByRole("button", { name: "Run ▶" });

async function runTurn(page: Page, text: string, phase = "succeeded"): Promise<void> {
  await task(page).fill(text);
  await runButton(page).click();
  await expect(page.getByLabel("Current turn").getByLabel("Your message")).toHaveText(text);
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", phase, { timeout: 45_000 });
}

/** An open fork: no running bar (now and a moment later), Run enabled, and a new turn runs to its answer. */
async function continueFork(page: Page, originId: string, text: string): Promise<void> {
  await expect.poll(() => sessionIdOf(page)).not.toBe(originId);
  await expect(page.getByTestId("fork-origin")).toBeVisible();
  await page.waitForTimeout(1500); // the old bug: a "running 0.0 s ■ Stop" bar that never cleared
  await expect(page.getByTestId("run-bar")).toHaveCount(0);
  await task(page).fill(text);
  await expect(runButton(page)).toBeEnabled();
  await runButton(page).click();
  await expect(page.getByLabel("Current turn").getByLabel("Your message")).toHaveText(text);
  await expect(page.getByLabel("Current turn").getByTestId("answer")).toContainText("42", { timeout: 45_000 });
  await expect(page.getByTestId("run-bar")).toHaveCount(0);
}

test("a fork takes new turns in the browser: Fork from here, Fork session and a CLI fork", async ({ page, shot }) => {
  await newSessionWithTask(page, "Name a prime", "direct");
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  const originId = sessionIdOf(page);
  await runTurn(page, "Name another prime");

  // Fork from here (turn 1)
  await page.getByRole("article", { name: "Turn 1" }).getByRole("button", { name: /Fork from here/ }).click();
  await expect.poll(() => sessionIdOf(page)).not.toBe(originId);
  await expect(page.getByRole("article", { name: "Turn 1" })).toBeVisible();
  await expect(page.getByTestId("run-bar")).toHaveCount(0);
  await task(page).fill("Continue the fork from here");
  await shot("fork-opened");
  await continueFork(page, originId, "Continue the fork from here");
  await shot("fork-continued");
  // a reload shows the same: the fork's new turn, answered, and nothing running
  await page.reload();
  await expect(page.getByLabel("Current turn").getByLabel("Your message")).toHaveText("Continue the fork from here");
  await expect(page.getByLabel("Current turn").getByTestId("answer")).toContainText("42");
  await expect(page.getByTestId("run-bar")).toHaveCount(0);
  await expect(runButton(page)).toBeVisible();

  // Share ▾ → Fork session (after every turn)
  await page.goto(`/app/workspace/${originId}`);
  await page.getByRole("button", { name: "Share: export or fork this session" }).click();
  await page.getByRole("menuitem", { name: /Fork session/ }).click();
  await continueFork(page, originId, "Continue the whole fork");
  await expect(page.getByRole("article", { name: "Turn 2" }).getByLabel("Your message")).toHaveText("Name another prime");

  // the CLI's fork, then opened in the browser (and reloaded there)
  const out = execFileSync("uv", ["run", "--frozen", "fleet-rlm", "sessions", "fork", originId, "--after-turn", "1", "--json", "--url-server", state().baseUrl], { cwd: REPO, encoding: "utf8" });
  const cliFork = (JSON.parse(out) as { id: string }).id;
  await page.goto(`/app/workspace/${cliFork}`);
  await page.reload();
  await continueFork(page, originId, "Continue the CLI fork");
  await expect(page.getByRole("article", { name: "Turn 1" }).getByLabel("Your message")).toHaveText("Name a prime");
});

test("a failed earlier turn shows as failed, in its session and in a fork of it", async ({ page, shot }) => {
  await newSessionWithTask(page, FAIL_TASK, "rlm");
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "failed", { timeout: 45_000 });
  await runTurn(page, "Now something that works");
  await page.reload();
  const turn1 = page.getByRole("article", { name: "Turn 1" });
  await expect(turn1.getByTestId("turn-status")).toHaveAttribute("data-status", "failed");
  await expect(turn1.getByTestId("turn-status")).toContainText("failed");
  await expect(turn1.getByTestId("turn-status")).toContainText("scripted failure");
  await expect(turn1.getByText("No answer.")).toHaveCount(0);
  await turn1.scrollIntoViewIfNeeded();
  await shot("failed-turn-badge");

  await page.getByRole("button", { name: "Share: export or fork this session" }).click();
  await page.getByRole("menuitem", { name: /Fork session/ }).click();
  await expect(page.getByTestId("fork-origin")).toBeVisible();
  await expect(page.getByRole("article", { name: "Turn 1" }).getByTestId("turn-status")).toHaveAttribute("data-status", "failed");
});

test("the Context panel lists the running turn's documents while it runs", async ({ page, shot }) => {
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.goto("/app/workspace");
  await page.getByRole("button", { name: "+ New session" }).click();
  await expect(page).toHaveURL(/\/app\/workspace\/[\w-]+$/);
  const panel = page.getByRole("complementary", { name: "Session panel" });
  await expect(panel.getByText(/No context in this session yet/)).toBeVisible(); // open by default on a wide screen, read before the turn
  await page.getByTestId("file-input").setInputFiles({ name: "sales.csv", mimeType: "text/csv", buffer: Buffer.from("region,amount\nnorth,10\nsouth,20\n") });
  await expect(page.getByLabel("Attachments")).toContainText("sales.csv");
  await task(page).fill(LOOP_TASK);
  await page.getByRole("combobox", { name: "Mode" }).selectOption("rlm");
  await runButton(page).click();
  await expect(page.getByTestId("run-bar")).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("run-panel").last().getByText("Context: sales.csv")).toBeVisible({ timeout: 30_000 });
  // as soon as the run tree shows the document, so does the panel: not only once the turn has ended
  await expect(panel.getByTestId("context-item")).toContainText("sales.csv", { timeout: 3_000 });
  await expect(panel.getByText(/No context in this session yet/)).toHaveCount(0);
  await expect(page.getByTestId("run-bar")).toBeVisible(); // still running
  await shot("context-panel-while-running");
  await page.getByRole("button", { name: "Stop run" }).click();
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "cancelled", { timeout: 30_000 });
  await expect(panel.getByTestId("context-item")).toContainText("sales.csv");
  await expect(panel.getByTestId("context-item")).toHaveCount(1);
});

test("a reload shows what the URL and the server say, not the history state of the first turn", async ({ page }) => {
  await newSessionWithTask(page, "First question of a new session", "direct");
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  await runTurn(page, "Second question of the session");
  await page.reload();
  await expect(page.getByLabel("Current turn").getByLabel("Your message")).toHaveText("Second question of the session");
  await expect(page.getByRole("article", { name: "Turn 1" }).getByLabel("Your message")).toHaveText("First question of a new session");
  await expect(page.getByRole("article", { name: "Turn 2" })).toHaveCount(0); // turn 2 is the current one, shown once
});

test("a bad session URL says 'No such session' once, with a way back", async ({ page, shot }) => {
  await page.goto("/app/workspace/deadbeefdeadbeefdeadbeefdeadbeef");
  const missing = page.getByTestId("missing-session");
  await expect(missing).toContainText("No such session");
  await expect(page.getByRole("alert")).toHaveCount(1);
  await expect(page.getByText(/Error \(not_found\)/)).toHaveCount(0);
  await expect(page.getByText("/api/v1")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Try again" })).toHaveCount(0);
  await expect(page.getByRole("complementary", { name: "Session panel" })).toHaveCount(0);
  await shot("missing-session");
  await missing.getByRole("link", { name: "Back to your sessions" }).click();
  await expect(page).toHaveURL(/\/app\/workspace$/);
  await expect(task(page)).toBeVisible();
});
