/**
 * Browser notifications (the Web Notifications API) are opt-in: the choice is kept in localStorage, and the
 * browser's permission is asked only when the user turns them on. They are "on" only while both say yes.
 */
import { useSyncExternalStore } from "react";

export const NOTIFICATIONS_KEY = "coach.notifications";

/** on / off; blocked: the browser refuses (the user said no, or site settings); unsupported: no Notification API. */
export type NotificationsState = "on" | "off" | "blocked" | "unsupported";

const listeners = new Set<() => void>();

function browserApi(): typeof Notification | null {
  return typeof window !== "undefined" && typeof window.Notification === "function" ? window.Notification : null;
}

function chosen(): boolean {
  try {
    return window.localStorage.getItem(NOTIFICATIONS_KEY) === "on";
  } catch {
    return false; // storage refused (privacy mode): notifications stay off
  }
}

function choose(on: boolean): void {
  try {
    if (on) window.localStorage.setItem(NOTIFICATIONS_KEY, "on");
    else window.localStorage.removeItem(NOTIFICATIONS_KEY);
  } catch {
    // nothing kept: the choice lasts until the page is left
  }
  for (const listener of [...listeners]) listener();
}

export function notificationsState(): NotificationsState {
  const api = browserApi();
  if (!api) return "unsupported";
  if (api.permission === "denied") return "blocked";
  return chosen() && api.permission === "granted" ? "on" : "off";
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // another tab turned them on or off
  const onStorage = (event: StorageEvent) => {
    if (event.key === NOTIFICATIONS_KEY || event.key === null) listener();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", onStorage);
  };
}

export function useNotificationsState(): NotificationsState {
  return useSyncExternalStore(subscribe, notificationsState, () => "unsupported");
}

/** Turns notifications on, asking the browser's permission first if it was never given or refused. */
export async function turnNotificationsOn(): Promise<NotificationsState> {
  const api = browserApi();
  if (!api) return "unsupported";
  let permission = api.permission;
  if (permission === "default") {
    try {
      permission = await api.requestPermission();
    } catch {
      permission = api.permission;
    }
  }
  choose(permission === "granted");
  return notificationsState();
}

export function turnNotificationsOff(): void {
  choose(false);
}

/**
 * Shows a browser notification when they are on; `onClick` runs after the window is brought forward.
 * `tag` makes a later notification with the same tag replace the earlier one (and two tabs show it once).
 */
export function notify(title: string, options: { body?: string; tag?: string; onClick?: () => void } = {}): Notification | null {
  const api = browserApi();
  if (!api || notificationsState() !== "on") return null;
  try {
    const notification = new api(title, { body: options.body, tag: options.tag, lang: "en" });
    notification.onclick = () => {
      window.focus();
      options.onClick?.();
      notification.close();
    };
    return notification;
  } catch {
    return null; // e.g. a browser that shows notifications only from a service worker
  }
}
