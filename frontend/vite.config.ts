/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The Flask backend the dev server forwards API, Socket.IO and health
// traffic to. Override with COACH_BACKEND_URL when it runs elsewhere.
const backend = process.env.COACH_BACKEND_URL ?? "http://127.0.0.1:5000";

export default defineConfig({
  plugins: [react()],
  base: "/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
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
    // a shared 2-core machine under load (CI beside other work) can take longer than the 5 s default to
    // load a lazy chunk: a slow test is not a failing one
    testTimeout: 15000,
  },
});
