import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  // Pre-bundling would move the package's modules away from the assets
  // they find with new URL(…, import.meta.url).
  optimizeDeps: { exclude: ["trickle-answer"] },
});
