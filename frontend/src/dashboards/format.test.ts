import { describe, expect, it } from "vitest";
import { autoReadyGap } from "./Badges";
import {
  formatLatency,
  formatLatencyPair,
  formatMs,
  formatPackValue,
  formatRate,
  fromLocalInput,
  shortId,
  toLocalInput,
} from "../format";
import { detailLines } from "./PackImport";

describe("dashboard formats", () => {
  it("spells rates as percentages with at most one decimal", () => {
    expect([formatRate(0.8571), formatRate(1), formatRate(0), formatRate(0.85), formatRate(NaN)]).toEqual([
      "85.7%",
      "100%",
      "0%",
      "85%",
      "—",
    ]);
  });

  it("spells latencies in ms, s and min", () => {
    expect([formatMs(850), formatMs(2100), formatMs(45_000), formatMs(185_000), formatMs(120_000), formatMs(null)]).toEqual([
      "850 ms",
      "2.1 s",
      "45 s",
      "3 min 5 s",
      "2 min",
      "—",
    ]);
    expect(formatLatency({ p50: 900, p90: 2100 })).toBe("median 900 ms · p90 2.1 s");
    expect(formatLatencyPair({ p50: 900, p90: 2100 })).toBe("900 ms / 2.1 s");
    expect(formatLatency({ p50: null, p90: null })).toBe("—");
  });

  it("shows pack values as JSON and an absent field as such", () => {
    expect(formatPackValue("a@x")).toBe('"a@x"');
    expect(formatPackValue(12)).toBe("12");
    expect(formatPackValue({ $missing: true })).toBe("(absent)");
    expect(formatPackValue({ $missing: true, other: 1 })).toBe('{"$missing":true,"other":1}');
  });

  it("shortens long ids only", () => {
    expect(shortId("5c8a10a1f57d40fca894c21bc0513cb1")).toBe("5c8a10a1…");
    expect(shortId("ex-1")).toBe("ex-1");
  });

  it("converts datetime-local values to UTC instants and back", () => {
    const iso = fromLocalInput("2026-11-22T10:30");
    expect(iso).toBe(new Date("2026-11-22T10:30").toISOString());
    expect(toLocalInput(iso)).toBe("2026-11-22T10:30");
    expect(fromLocalInput("")).toBeNull();
    expect(toLocalInput("not a date")).toBe("");
  });

  it("flattens the server's validation details into lines", () => {
    expect(detailLines({ step_id: ["must be one of ['mail']"], stats: { groups: ["bad count"] } })).toEqual([
      "step_id: must be one of ['mail']",
      "stats.groups: bad count",
    ]);
    expect(detailLines(undefined)).toEqual([]);
  });

  it("says what stands between a workflow and AUTO-ready", () => {
    const gap = { decisions_to_coaching: 3, window_decisions_needed: 1, acceptance_gap: 0.1, auto_min_window: 20, auto_acceptance: 0.85 };
    expect(autoReadyGap({ auto_ready: false, to_auto: gap })).toBe(
      "Needs 3 more decisions to leave observation; 1 more counted decision in the window; acceptance to rise 10 points to reach the 85% bar",
    );
    expect(autoReadyGap({ auto_ready: true, to_auto: gap })).toBe("");
    // with the sequential test's figures, the distance is in accepts
    const evidence = { statistic: 1.2, threshold: 20, decisions_needed_if_all_accepted: 17, test: "mixture" };
    expect(autoReadyGap({ auto_ready: false, to_auto: { ...gap, decisions_to_coaching: 0, window_decisions_needed: 0 }, evidence }))
      .toBe("Needs about 17 more accepts in a row");
    expect(autoReadyGap({ auto_ready: false, to_auto: gap, evidence: { ...evidence, decisions_needed_if_all_accepted: 1 } }))
      .toBe("Needs 3 more decisions to leave observation; 1 more counted decision in the window; about 1 more accept in a row");
  });
});
