// usage: node shot.mjs URL out.png [width] [actions-js]
import { chromium } from "@playwright/test";
const [url, out, width = "1280", script = ""] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage({ viewport: { width: Number(width), height: 900 } });
page.on("console", (m) => { if (m.type() === "error" || /Security/.test(m.text())) console.log("console:", m.text()); });
page.on("pageerror", (e) => console.log("pageerror:", e.message));
await page.goto(url);
await page.waitForTimeout(1500);
if (script) { const fn = new Function("page", `return (async () => { ${script} })()`); await fn(page); }
await page.screenshot({ path: out, fullPage: false });
console.log("scrollWidth", await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]));
await browser.close();
