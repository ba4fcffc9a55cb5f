import { defineConfig } from "vite";
import vue from "@vitejs/plugin-vue";

export default defineConfig({
  plugins: [vue({ template: { compilerOptions: { isCustomElement: (tag) => tag === "trickle-answer" } } })],
  // Pre-bundling would move the package's modules away from the assets
  // they find with new URL(…, import.meta.url).
  optimizeDeps: { exclude: ["trickle-answer"] },
});
