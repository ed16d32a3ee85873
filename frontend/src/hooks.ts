import { useEffect, useLayoutEffect, useMemo, useState } from "react";

/**
 * Sets the browser tab title for the current page, with the frame that shows what it counts (a layout effect:
 * as a passive effect, it came after the page was painted, behind the other effects of a page load).
 */
export function useDocumentTitle(title: string) {
  useLayoutEffect(() => {
    document.title = title ? `${title} · Coach` : "Coach";
  }, [title]);
}

/** Whether a CSS media query holds now, kept up to date (false where the browser has no matchMedia). */
export function useMediaQuery(query: string): boolean {
  const list = useMemo(
    () => (typeof window !== "undefined" && typeof window.matchMedia === "function" ? window.matchMedia(query) : null),
    [query],
  );
  const [matches, setMatches] = useState(() => list?.matches ?? false);
  useEffect(() => {
    if (!list) return;
    setMatches(list.matches);
    const changed = () => setMatches(list.matches);
    list.addEventListener?.("change", changed);
    return () => list.removeEventListener?.("change", changed);
  }, [list]);
  return matches;
}
