import { describe, expect, it } from "vitest";

// Every source file of the web app, as text.
const sources = import.meta.glob(["./**/*.{ts,tsx,css}", "!./**/*.test.{ts,tsx}"], {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

// Emoji that Debian's fonts (DejaVu, what its Chromium has) do not draw: Chromium shows an empty box for them.
// U+2300–U+23FF holds ⌚ ⌛ ⏩… ⏱ ⏳ (⌘ and ⏎, which DejaVu has, are allowed); the planes from U+1F000 are the
// pictographs (🔒 ⏰ 👍 …). Use words, or a drawn icon such as components/ClockIcon.tsx.
const MISSING = /[\u231A\u231B\u23E9-\u23FF]|[\u{1F000}-\u{1FAFF}]/u;

describe("glyphs", () => {
  it("finds the app's sources", () => {
    expect(Object.keys(sources).length).toBeGreaterThan(50);
  });

  it("uses no emoji that Debian's fonts lack", () => {
    const found = Object.entries(sources).flatMap(([file, text]) =>
      text.split("\n").flatMap((line, i) => (MISSING.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
