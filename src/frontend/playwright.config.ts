import { defineConfig } from "@playwright/test";

// Drives the system Chromium (no browser downloads) against a real `fleet web` + fake LM started by globalSetup.
export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results/artifacts",
  globalSetup: "./e2e/global-setup.ts",
  globalTeardown: "./e2e/global-teardown.ts",
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 20_000 },
  reporter: [["list"]],
  use: {
    browserName: "chromium",
    headless: true,
    screenshot: "only-on-failure",
    trace: "off",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      chromiumSandbox: false,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // a DNS-rebinding name: resolves to loopback, so the server must refuse it by its Host header
        "--host-resolver-rules=MAP rebind.test 127.0.0.1",
      ],
    },
  },
});
