import { useEffect, useRef } from "react";
import { shortcutKey } from "./shortcutPreference";

/** Handlers by `KeyboardEvent.key` ("a", "?", "Enter", …). */
export type ShortcutMap = Partial<Record<string, (event: KeyboardEvent) => void>>;

const TYPING_INPUT_TYPES = new Set([
  "text", "search", "email", "number", "password", "tel", "url", "date", "datetime-local", "month", "time", "week",
]);

/** True while focus is somewhere keys are text: a field, a select, or editable content. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target.closest("[contenteditable=''], [contenteditable='true']")) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement) return TYPING_INPUT_TYPES.has(target.type || "text");
  return false;
}

/** True for elements that act on Enter themselves (a link, a button…): Enter is theirs, not a shortcut. */
function activatesOnEnter(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    target.closest("a[href], button, summary, [role='button'], [role='link'], [role='tab'], [role='menuitem']") !== null
  );
}

/** True while a modal dialog is open: its keys belong to it (it handles Esc itself). */
export function modalDialogOpen(): boolean {
  return document.querySelector("[role='dialog'][aria-modal='true'], [role='alertdialog'][aria-modal='true']") !== null;
}

/**
 * Single-key shortcuts on the whole page. They are off while typing in a
 * field, while a modal dialog is open, with Ctrl/Meta held, and for
 * auto-repeated keys (holding `a` must not accept twice). Character keys
 * follow the person's choice (shortcutPreference.ts): alone, with Alt, or off.
 */
export function useShortcuts(shortcuts: ShortcutMap, enabled = true): void {
  const latest = useRef(shortcuts);
  latest.current = shortcuts;

  useEffect(() => {
    if (!enabled) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.repeat) return;
      const key = shortcutKey(event);
      if (key === null) return;
      if (isTypingTarget(event.target) || modalDialogOpen()) return;
      if (key === "Enter" && activatesOnEnter(event.target)) return;
      const handler = latest.current[key];
      if (!handler) return;
      event.preventDefault();
      handler(event);
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [enabled]);
}
