import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  // Pre-bundling would move the package's modules away from the assets
  // they find with new URL(…, import.meta.url).
  optimizeDeps: { exclude: ["trickle-answer"] },
  // Two pages: index.html (frameworks_test.go) and app.html, the app the
  // pairwise suite drives (pairwise_test.go).
  build: { rollupOptions: { input: { index: "index.html", app: "app.html" } } },
});
