import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// The build is committed to src/fleet_rlm/ui/dist and checked by `make ui-check`, so it must be deterministic:
// content-hashed names, no timestamps, no source maps with absolute paths.
export default defineConfig({
  plugins: [react(), tailwindcss()],
  base: "/app/",
  build: {
    outDir: "../fleet_rlm/ui/dist",
    emptyOutDir: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1500,
  },
  server: {
    // The proxy keeps the browser's Host (no changeOrigin): the API accepts a POST or WebSocket whose Origin
    // matches the Host it was sent to, so pages of this dev server pass its Origin check without any setting.
    proxy: { "/api": { target: "http://127.0.0.1:8000", ws: true }, "/ready": "http://127.0.0.1:8000" },
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.{ts,tsx}"],
    setupFiles: ["src/test/setup.ts"],
  },
});
