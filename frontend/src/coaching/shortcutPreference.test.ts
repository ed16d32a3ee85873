import { afterEach, describe, expect, it } from "vitest";
import { keyLabel, reloadShortcutMode, setShortcutMode, shortcutKey, shortcutMode } from "./shortcutPreference";

const press = (init: KeyboardEventInit) => new KeyboardEvent("keydown", init);

afterEach(() => setShortcutMode("single"));

describe("shortcut preference (WCAG 2.1.4)", () => {
  it("single keys: the key alone; Alt, Ctrl or Meta make it no shortcut", () => {
    expect(shortcutKey(press({ key: "a" }))).toBe("a");
    expect(shortcutKey(press({ key: "a", altKey: true, code: "KeyA" }))).toBeNull();
    expect(shortcutKey(press({ key: "a", ctrlKey: true }))).toBeNull();
    expect(shortcutKey(press({ key: "Enter" }))).toBe("Enter");
  });

  it("with Alt: read from the key's position (macOS types å for Alt+a), Shift kept", () => {
    setShortcutMode("alt");
    expect(shortcutKey(press({ key: "a" }))).toBeNull();
    expect(shortcutKey(press({ key: "å", altKey: true, code: "KeyA" }))).toBe("a");
    expect(shortcutKey(press({ key: "∏", altKey: true, shiftKey: true, code: "KeyP" }))).toBe("P");
    expect(shortcutKey(press({ key: "¿", altKey: true, shiftKey: true, code: "Slash" }))).toBe("?");
    expect(shortcutKey(press({ key: "Enter" }))).toBe("Enter");
    expect(keyLabel("a")).toBe("Alt+a");
  });

  it("off: no character key is a shortcut, Enter and Esc still are; the choice survives a reload", () => {
    setShortcutMode("off");
    expect(shortcutKey(press({ key: "a" }))).toBeNull();
    expect(shortcutKey(press({ key: "Escape" }))).toBe("Escape");
    expect(keyLabel("a")).toBeNull();
    reloadShortcutMode();
    expect(shortcutMode()).toBe("off");
    localStorage.setItem("coach.shortcuts", "bogus");
    reloadShortcutMode();
    expect(shortcutMode()).toBe("single");
  });
});
