// Test fixtures: baseURL from the servers globalSetup started, and a helper that saves named screenshots.
import { test as base, expect, type Page } from "@playwright/test";
import { readFileSync } from "node:fs";
import path from "node:path";
import { STATE_FILE, type ServerState } from "./servers";

export const state = (): ServerState => JSON.parse(readFileSync(STATE_FILE, "utf8")) as ServerState;

export const test = base.extend<{ shot: (name: string) => Promise<void>; cspClean: void }>({
  baseURL: async ({}, use) => use(state().baseUrl),
  // Every test runs the app under its Content-Security-Policy: any violation Chromium reports fails the test.
  cspClean: [
    async ({ page }, use) => {
      const violations: string[] = [];
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      await use();
      expect(violations, "CSP violations").toEqual([]);
    },
    { auto: true },
  ],
  shot: async ({ page }, use) => {
    await use(async (name: string) => {
      await page.screenshot({ path: path.join("test-results", "screens", `${name}.png`), fullPage: true });
    });
  },
});
export { expect };

export async function newSessionWithTask(page: Page, task: string, mode = "auto"): Promise<void> {
  await page.goto("/");
  await expect(page).toHaveURL(/\/app\/workspace$/);
  await page.getByRole("textbox", { name: /^Task/ }).fill(task);
  await page.getByRole("combobox", { name: "Mode" }).selectOption(mode);
  await page.getByRole("button", { name: "Run ▶" }).click();
  await expect(page).toHaveURL(/\/app\/workspace\/[\w-]+$/);
}
