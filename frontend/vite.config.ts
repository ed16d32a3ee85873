/// <reference types="vitest/config" />
import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin } from "vite";
import react from "@vitejs/plugin-react";

// The Flask backend the dev server forwards API, Socket.IO and health
// traffic to. Override with COACH_BACKEND_URL when it runs elsewhere.
const backend = process.env.COACH_BACKEND_URL ?? "http://127.0.0.1:5000";

/** The landing pages whose files index.html names for src/earlyReads.ts to preload: its key -> the page's module. */
const LANDING_PAGES: Record<string, string> = { queue: "src/coaching/QueuePage.tsx", coach: "src/coaching/CoachingPage.tsx" };

/**
 * src/earlyReads.ts is an entry of its own, loaded by index.html ahead of the app (an async module script, first in
 * <head>): the page load's first reads, and the files of its page, start while the app's entry chunk is fetched and
 * parsed. The files of each landing page (its chunk, the chunks it imports but the entry's, their CSS) are a JSON
 * data block before it: never run, so the Content-Security-Policy's `script-src 'self'` holds.
 */
function earlyReadsFirst(): Plugin {
  return {
    name: "coach-early-reads-first",
    transformIndexHtml: {
      order: "post",
      handler(_html, context) {
        const bundle = context.bundle ?? {};
        const chunks = Object.values(bundle).filter((file) => file.type === "chunk");
        const early = chunks.find((chunk) => chunk.isEntry && chunk.name === "earlyReads");
        if (!early) return [];
        const entry = chunks.find((chunk) => chunk.isEntry && chunk.name === "index");
        const files: Record<string, string[]> = {};
        for (const [key, source] of Object.entries(LANDING_PAGES)) {
          const page = chunks.find((chunk) => chunk.facadeModuleId?.endsWith(source));
          if (!page) continue;
          const seen = new Set<string>();
          const css = new Set<string>();
          const visit = (fileName: string) => {
            const chunk = bundle[fileName];
            if (seen.has(fileName) || fileName === entry?.fileName || chunk?.type !== "chunk") return;
            seen.add(fileName);
            chunk.viteMetadata?.importedCss.forEach((file) => css.add(file));
            chunk.imports.forEach(visit);
          };
          visit(page.fileName);
          files[key] = [...seen, ...css].map((file) => `/${file}`);
        }
        return [
          { tag: "script", attrs: { type: "application/json", id: "coach-page-files" }, children: JSON.stringify(files), injectTo: "head-prepend" },
          { tag: "script", attrs: { type: "module", crossorigin: true, async: true, src: `/${early.fileName}` }, injectTo: "head-prepend" },
        ];
      },
    },
  };
}

export default defineConfig({
  plugins: [react(), earlyReadsFirst()],
  base: "/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    rolldownOptions: {
      input: {
        index: fileURLToPath(new URL("./index.html", import.meta.url)),
        earlyReads: fileURLToPath(new URL("./src/earlyReads.ts", import.meta.url)),
      },
    },
  },
  server: {
    proxy: {
      "/api": { target: backend, changeOrigin: true },
      "/socket.io": { target: backend, changeOrigin: true, ws: true },
      "/healthz": { target: backend, changeOrigin: true },
    },
  },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    css: false,
    restoreMocks: true,
    unstubGlobals: true,
    // one jsdom per worker, not per file (Vitest's "isolate: false"): setting up jsdom and re-importing React for
    // each of ~50 files was three quarters of the run (126 s -> 33 s here). The tests keep no state between files:
    // each renders with its own QueryClient, and mocks and stubbed globals are restored after every test.
    isolate: false,
    // a shared 2-core machine under load (CI beside other work) can take longer than the 5 s default to
    // load a lazy chunk: a slow test is not a failing one
    testTimeout: 15000,
  },
});
