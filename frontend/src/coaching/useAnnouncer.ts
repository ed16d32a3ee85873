import { useCallback, useRef, useState } from "react";

/** Announcements this close together are read as one. */
const ANNOUNCE_TOGETHER_MS = 1_500;

/**
 * What the panel's live region says to a screen reader, and `announce` to say something. A decision's ack and the
 * next suggestion's push arrive together: announcements that close are said as one, in order of arrival.
 */
export function useAnnouncer() {
  const [announcement, setAnnouncement] = useState("");
  const lastAnnounced = useRef(0);
  const announce = useCallback((text: string) => {
    const now = Date.now();
    const together = now - lastAnnounced.current < ANNOUNCE_TOGETHER_MS;
    lastAnnounced.current = now;
    setAnnouncement((previous) => (together && previous ? `${previous} ${text}` : text));
  }, []);
  return { announcement, announce };
}
