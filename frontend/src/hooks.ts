import { useLayoutEffect } from "react";

/**
 * Sets the browser tab title for the current page, with the frame that shows what it counts (a layout effect:
 * as a passive effect, it came after the page was painted, behind the other effects of a page load).
 */
export function useDocumentTitle(title: string) {
  useLayoutEffect(() => {
    document.title = title ? `${title} · Coach` : "Coach";
  }, [title]);
}
