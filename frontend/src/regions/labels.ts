/** Regions in words, for the lead's pages and the operator's (the coaching panel, the queue): no imports. */

type Mode = "coaching" | "auto" | "always_review";

/** "auto", "coaching", "always reviewed": a region's mode in words. */
export function regionModeLabel(mode: Mode): string {
  return mode === "auto" ? "auto" : mode === "always_review" ? "always reviewed" : "coaching";
}

/** "small refunds (auto)": the region a suggestion's call fell in, as the panel and the queue name it. */
export function suggestionRegionText(region: { name: string; mode: Mode; current: boolean }): string {
  return `${region.name} (${regionModeLabel(region.mode)}${region.current ? "" : "; its condition changed since"})`;
}
