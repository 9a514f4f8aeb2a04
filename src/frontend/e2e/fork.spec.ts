// Fork and "Edit and rerun" in the browser, against a real fleet web and the fake LM.
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { expect, newSessionWithTask, test } from "./fixtures";
import { EDIT_MARKER, EDITED_ANSWER } from "./scenarios";

test.describe.configure({ timeout: 120_000 }); // several scripted runs each, on a shared 2-core machine

async function runTurn(page: Page, task: string): Promise<void> {
  await page.getByRole("textbox", { name: /^Task/ }).fill(task);
  await page.getByRole("button", { name: "Run ▶" }).click();
  await expect(page.getByLabel("Current turn").getByLabel("Your message")).toHaveText(task);
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
}

async function seriousViolations(page: Page): Promise<string[]> {
  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  return axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

const sessionIdOf = (page: Page) => /\/app\/workspace\/([\w-]+)/.exec(page.url())![1];

test("edit and rerun an earlier turn: a fork with the history before it and the edited run", async ({ page, shot }) => {
  await newSessionWithTask(page, "List three prime numbers", "rlm");
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  const originId = sessionIdOf(page);
  await runTurn(page, "Now their squares");
  await runTurn(page, "Now their halves");
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("List three prime numbers");

  const turn2 = page.getByRole("article", { name: "Turn 2" });
  await turn2.getByRole("button", { name: /Edit and rerun/ }).click();
  const editor = turn2.getByRole("textbox", { name: "Edited task for turn 2" });
  await expect(editor).toHaveValue("Now their squares");
  await expect(turn2.getByText("forked after turn 1")).toBeVisible();
  await editor.fill(`Now their cubes ${EDIT_MARKER}`);
  await shot("fork-edit-turn", { doc: "workspace/fork-edit-turn" });
  expect(await seriousViolations(page)).toEqual([]); // the turn actions and the inline editor
  await turn2.getByRole("button", { name: /Rerun in a fork/ }).click();

  // a new session: the origin's turn 1, then the edited task streaming to its own answer
  await expect.poll(() => sessionIdOf(page)).not.toBe(originId);
  const forkId = sessionIdOf(page);
  const current = page.getByLabel("Current turn");
  await expect(current.getByLabel("Your message")).toHaveText(`Now their cubes ${EDIT_MARKER}`);
  await expect(current.getByTestId("answer")).toContainText(EDITED_ANSWER, { timeout: 45_000 });
  await expect(page.getByRole("article", { name: "Turn 1" }).getByLabel("Your message")).toHaveText("List three prime numbers");
  await expect(page.getByText("Now their squares")).toHaveCount(0);
  await expect(page.getByText("Now their halves")).toHaveCount(0);
  const origin = page.getByTestId("fork-origin");
  await expect(origin).toContainText("Forked from List three prime numbers after turn 1");
  await shot("fork-rerun-result");
  expect(await seriousViolations(page)).toEqual([]); // the origin banner

  // reload: the fork holds its two turns (the inherited one and the rerun), the origin is one link away
  await page.reload();
  await expect(page.getByLabel("Current turn").getByTestId("answer")).toContainText(EDITED_ANSWER);
  await origin.getByRole("link", { name: "List three prime numbers" }).click();
  await expect.poll(() => sessionIdOf(page)).toBe(originId);
  await expect(page.getByRole("article", { name: "Turn 2" }).getByLabel("Your message")).toHaveText("Now their squares");
  const forks = page.getByTestId("fork-list");
  await expect(forks).toContainText("after turn 1");
  expect(await seriousViolations(page)).toEqual([]); // the list of forks
  await forks.getByRole("link").first().click();
  await expect.poll(() => sessionIdOf(page)).toBe(forkId);
});

test("fork from here keeps turns 1..N; the header's Fork session keeps every turn", async ({ page }) => {
  await newSessionWithTask(page, "Name a prime", "rlm");
  await expect(page.getByTestId("run-panel").last()).toHaveAttribute("data-phase", "succeeded", { timeout: 45_000 });
  const originId = sessionIdOf(page);
  await runTurn(page, "Name another prime");

  await page.getByRole("article", { name: "Turn 1" }).getByRole("button", { name: /Fork from here/ }).click();
  await expect.poll(() => sessionIdOf(page)).not.toBe(originId);
  await expect(page.getByTestId("fork-origin")).toContainText("Forked from Name a prime after turn 1");
  await expect(page.getByRole("article", { name: "Turn 1" })).toBeVisible();
  await expect(page.getByText("Name another prime")).toHaveCount(0);
  await expect(page.getByLabel("Current turn")).toHaveCount(0);

  await page.goto(`/app/workspace/${originId}`);
  await page.getByRole("button", { name: "Share: export or fork this session" }).click();
  await page.getByRole("menuitem", { name: /Fork session/ }).click();
  await expect.poll(() => sessionIdOf(page)).not.toBe(originId);
  await expect(page.getByTestId("fork-origin")).toContainText("after turn 2");
  await expect(page.getByRole("article", { name: "Turn 2" }).getByLabel("Your message")).toHaveText("Name another prime");
});
