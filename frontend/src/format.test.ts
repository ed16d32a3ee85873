import { describe, expect, it } from "vitest";
import { confidenceLabel, correctionPackId, formatAge, formatJson, formatRate, formatValue } from "./format";

describe("shared formats", () => {
  it("spells rates with one decimal, or whole for the operator side", () => {
    expect([formatRate(0.857), formatRate(0.857, 0), formatRate(0.75, 0), formatRate(null, 0)]).toEqual([
      "85.7%",
      "86%",
      "75%",
      "—",
    ]);
    expect(confidenceLabel(0.62)).toBe("62% (medium)");
  });

  it("says how old a date is", () => {
    const now = Date.parse("2026-11-22T12:00:00Z");
    expect(formatAge("2026-11-22T11:59:30Z", now)).toBe("just now");
    expect(formatAge("2026-11-22T11:57:00Z", now)).toBe("3 min ago");
    expect(formatAge("2026-11-22T10:00:00Z", now)).toBe("2 h ago");
    expect(formatAge("2026-11-18T12:00:00Z", now)).toBe("4 days ago");
  });

  it("shows values: strings as they are for display, quoted as JSON", () => {
    expect(formatValue("hi")).toBe("hi");
    expect(formatValue(undefined)).toBe("(none)");
    expect(formatValue({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(formatJson("hi")).toBe('"hi"');
    expect(correctionPackId("correction_pack:p-1")).toBe("p-1");
    expect(correctionPackId("llm")).toBeNull();
  });
});
