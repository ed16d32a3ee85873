import { useEffect } from "react";

/** Sets the browser tab title for the current page. */
export function useDocumentTitle(title: string) {
  useEffect(() => {
    document.title = title ? `${title} · Coach` : "Coach";
  }, [title]);
}
