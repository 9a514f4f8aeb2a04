// Volumes upload and delete: a file uploaded into memory/ appears in the tree and opens; uploading it again
// asks before replacing it; delete asks first, and the file is gone, also after a reload. Read-only folders
// get no controls, and the server refuses them anyway.
import AxeBuilder from "@axe-core/playwright";
import { expect, state, test } from "./fixtures";

const NAME = `e2e-upload-${Date.now()}.md`;

test("volumes: upload into memory/, replace, delete with confirmation, gone after reload", async ({ page, shot }) => {
  await page.goto("/app/volumes");
  const form = page.getByRole("form", { name: "Upload a file" });
  const files = page.getByRole("navigation", { name: "Files" });
  // only memory/ and artifacts/ (and their folders) are offered as targets
  await expect(form.getByLabel("Into")).toBeVisible();
  const targets = await form.getByLabel("Into").locator("option").allTextContents();
  expect(targets.length).toBeGreaterThan(1);
  for (const t of targets) expect(t).toMatch(/^(memory|artifacts)\//);

  // the limit shows before anything is sent, in the UI's words (the one limit shared with chat attachments)
  await expect(form.getByTestId("upload-limit")).toHaveText("Up to 50 MiB per file, the same limit as chat attachments.");
  await form.getByLabel("File", { exact: true }).setInputFiles({ name: NAME, mimeType: "text/markdown", buffer: Buffer.from("# Uploaded\n\nfirst version\n") });
  await expect(form.getByLabel("File name")).toHaveValue(NAME);
  await form.getByRole("button", { name: "Upload" }).click();
  await expect(files.getByRole("button", { name: NAME })).toBeVisible();
  const viewer = page.getByRole("article", { name: `File memory/${NAME}` });
  await expect(viewer).toContainText("first version");

  // the same name again: the form says so before sending and offers Replace (no API wording anywhere)
  await form.getByLabel("File", { exact: true }).setInputFiles({ name: NAME, mimeType: "text/markdown", buffer: Buffer.from("# Uploaded\n\nsecond version\n") });
  await expect(form.getByTestId("upload-clash")).toHaveText(`memory/${NAME} already exists. Replace it, or type another file name.`);
  await expect(form.getByRole("button", { name: "Upload", exact: true })).toHaveCount(0);
  await expect(page.locator("body")).not.toContainText(/overwrite=true|upload_max_bytes|file_exists/);
  await form.getByRole("button", { name: `Replace memory/${NAME}` }).click();
  await expect(viewer).toContainText("second version");
  await expect(form.getByTestId("error-line")).toHaveCount(0);
  await expect(form.getByTestId("upload-clash")).toHaveCount(0);
  await shot("volumes-upload", { doc: "workspace/volumes-upload" });

  // into artifacts/ too
  // a name typed first is kept when the file is chosen
  await form.getByLabel("Into").selectOption("artifacts");
  await form.getByLabel("File name").fill(`a-${NAME}.json`);
  await form.getByLabel("File", { exact: true }).setInputFiles({ name: "e2e-data.json", mimeType: "application/json", buffer: Buffer.from('{"ok": true}') });
  await expect(form.getByLabel("File name")).toHaveValue(`a-${NAME}.json`);
  await form.getByRole("button", { name: "Upload" }).click();
  await expect(page.getByRole("article", { name: `File artifacts/a-${NAME}.json` })).toBeVisible();

  // delete asks first (Cancel keeps the file), then removes it
  await files.getByRole("button", { name: NAME, exact: true }).click();
  await viewer.getByRole("button", { name: "Delete" }).click();
  const confirm = page.getByRole("dialog", { name: `Delete memory/${NAME}?` });
  await expect(confirm).toBeVisible();
  const axe = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa"]).analyze();
  expect(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
  await shot("volumes-delete-confirm");
  await confirm.getByRole("button", { name: "Cancel" }).click();
  await expect(viewer).toBeVisible();
  await viewer.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await expect(files.getByRole("button", { name: NAME, exact: true })).toHaveCount(0);
  await expect(viewer).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole("navigation", { name: "Files" }).getByRole("button", { name: `a-${NAME}.json` })).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Files" }).getByRole("button", { name: NAME, exact: true })).toHaveCount(0);
});

test("volumes: read-only folders have no delete control and the server refuses writes there", async ({ page }) => {
  const res = await fetch(`${state().baseUrl}/api/v1/runtime/volume/file?path=buffers/x.txt`, { method: "PUT", body: "x", headers: { origin: state().baseUrl } });
  expect(res.status).toBe(403);
  expect((await res.json()).error.code).toBe("volume_read_only");
  await page.goto("/app/volumes");
  const files = page.getByRole("navigation", { name: "Files" });
  await files.getByRole("button", { name: /MEMORIES\.md/ }).click();
  await expect(page.getByRole("article", { name: /File memory\/MEMORIES\.md/ }).getByRole("button", { name: "Delete" })).toBeVisible();
  // a failed delete shows the server's code in one line (the file was removed behind the page's back)
  await fetch(`${state().baseUrl}/api/v1/runtime/volume/file?${new URLSearchParams({ path: "memory/gone-e2e.txt" })}`, { method: "PUT", body: "x", headers: { origin: state().baseUrl } });
  await page.getByRole("button", { name: "Refresh" }).click();
  await files.getByRole("button", { name: "gone-e2e.txt" }).click();
  const viewer = page.getByRole("article", { name: "File memory/gone-e2e.txt" });
  await expect(viewer).toBeVisible();
  await fetch(`${state().baseUrl}/api/v1/runtime/volume/file?path=memory/gone-e2e.txt`, { method: "DELETE", headers: { origin: state().baseUrl } });
  await viewer.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await expect(viewer.getByTestId("error-line")).toHaveText(/^Error \(\w+\): /);
  await expect(viewer.getByTestId("error-line")).toContainText("memory/gone-e2e.txt");
});
