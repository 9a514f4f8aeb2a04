// Test fixtures: baseURL from the servers globalSetup started, and a helper that saves named screenshots.
import { test as base, expect, type Page } from "@playwright/test";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { REPO, STATE_FILE, type ServerState } from "./servers";

export const state = (): ServerState => JSON.parse(readFileSync(STATE_FILE, "utf8")) as ServerState;

export interface ShotOptions {
  /** Also save it as docs/images/<doc>.png, an image the docs show (tests/test_doc_images.py checks that every
   * image docs/*.md references is written here, by a string literal, so no doc image lacks a generating test). */
  doc?: string;
  /** The whole page (default) or only the viewport (a long page, e.g. a phone-width export). */
  fullPage?: boolean;
}

/** Saves a full-page screenshot under test-results/screens, and under docs/images when the docs use it. Doc
 * images are taken the same way every run: animations finished, no caret, CSS pixels, web fonts loaded. */
export async function screenshot(page: Page, name: string, options: ShotOptions = {}): Promise<void> {
  const fullPage = options.fullPage ?? true;
  await page.screenshot({ path: path.join("test-results", "screens", `${name}.png`), fullPage });
  if (!options.doc) return;
  const file = path.join(REPO, "docs", "images", `${options.doc}.png`);
  mkdirSync(path.dirname(file), { recursive: true });
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
  await page.screenshot({ path: file, fullPage, animations: "disabled", caret: "hide", scale: "css" });
}

export const test = base.extend<{ shot: (name: string, options?: ShotOptions) => Promise<void>; cspClean: void }>({
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
    await use((name: string, options?: ShotOptions) => screenshot(page, name, options));
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
