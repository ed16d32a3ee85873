/**
 * How single-character shortcuts (a, r, j, ?, …) are typed, a choice of each person kept in this browser
 * (WCAG 2.1.4 Character Key Shortcuts): `single` (the key alone, the default), `alt` (Alt + the key, so speech input
 * and stray key presses never decide anything), or `off`. Enter, Esc and the arrows are not character keys and
 * always work. Read once and kept in memory: the keyboard loop pays one variable read per key.
 */
import { useSyncExternalStore } from "react";

export type ShortcutMode = "single" | "alt" | "off";
export const SHORTCUT_STORAGE_KEY = "coach.shortcuts";
const MODES: readonly ShortcutMode[] = ["single", "alt", "off"];

function stored(): ShortcutMode {
  try {
    const value = localStorage.getItem(SHORTCUT_STORAGE_KEY);
    return MODES.includes(value as ShortcutMode) ? (value as ShortcutMode) : "single";
  } catch {
    return "single";
  }
}

let mode: ShortcutMode = stored();
const listeners = new Set<() => void>();
const notify = () => listeners.forEach((listener) => listener());

if (typeof window !== "undefined") {
  // another tab changed it
  window.addEventListener("storage", (event) => {
    if (event.key === SHORTCUT_STORAGE_KEY) {
      mode = stored();
      notify();
    }
  });
}

export function shortcutMode(): ShortcutMode {
  return mode;
}

export function setShortcutMode(next: ShortcutMode): void {
  mode = next;
  try {
    localStorage.setItem(SHORTCUT_STORAGE_KEY, next);
  } catch {
    // private mode: the choice lasts until the page is closed
  }
  notify();
}

/** Re-reads the stored choice (tests, or a page that changed localStorage itself). */
export function reloadShortcutMode(): void {
  mode = stored();
  notify();
}

export function useShortcutMode(): ShortcutMode {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    shortcutMode,
    shortcutMode,
  );
}

const CODE_KEYS: Record<string, [string, string]> = {
  Slash: ["/", "?"],
  Period: [".", ">"],
  Comma: [",", "<"],
  Minus: ["-", "_"],
  Equal: ["=", "+"],
  Semicolon: [";", ":"],
  Quote: ["'", '"'],
  BracketLeft: ["[", "{"],
  BracketRight: ["]", "}"],
  Backquote: ["`", "~"],
};

/**
 * The shortcut a key press stands for under the current mode, or null when it is not one. With Alt held, macOS
 * types another character (Alt+a is "å"), so the key is read from its position (`code`) instead.
 */
export function shortcutKey(event: KeyboardEvent): string | null {
  if (event.ctrlKey || event.metaKey) return null;
  const character = event.key.length === 1;
  if (!character) return event.altKey ? null : event.key;
  if (mode === "off") return null;
  if (mode === "single") return event.altKey ? null : event.key;
  if (!event.altKey) return null;
  const code = event.code ?? "";
  if (code.startsWith("Key")) {
    const letter = code.slice(3).toLowerCase();
    return event.shiftKey ? letter.toUpperCase() : letter;
  }
  if (code.startsWith("Digit")) return code.slice(5);
  const pair = CODE_KEYS[code];
  if (pair) return event.shiftKey ? pair[1] : pair[0];
  return event.key;
}

/** How a shortcut key reads in hints under `current`: "a", "Alt+a", or null when shortcuts are off. */
export function keyLabel(key: string, current: ShortcutMode = mode): string | null {
  if (key.length !== 1) return key;
  if (current === "off") return null;
  return current === "alt" ? `Alt+${key}` : key;
}
