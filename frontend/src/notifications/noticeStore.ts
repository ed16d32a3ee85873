/**
 * The notices of this browser session, per workspace: those pushed while the app is open (on any page, so that
 * the dashboard still shows them when the user comes to it), which of them were announced to screen readers, and
 * which notices the user dismissed (kept in localStorage: dismissed stays dismissed across reloads).
 */
import { useContext, useSyncExternalStore } from "react";
import { AuthContext } from "../auth/context";
import type { DashboardNotice } from "./types";

/** Pushed notices kept per workspace (the newest). */
export const MAX_LIVE_NOTICES = 50;
/** Dismissed notice ids kept per workspace (the newest): older notices are past the server's window anyway. */
export const MAX_DISMISSED = 200;
export const DISMISSED_PREFIX = "coach.notices.dismissed.";

/** The key the notices of the current workspace are kept under ("none" outside a workspace). */
export function useNoticeWorkspace(): string {
  const workspace = useContext(AuthContext)?.workspace;
  return workspace ? String(workspace.id) : "none";
}

interface WorkspaceNotices {
  live: readonly DashboardNotice[];
  announced: Set<number>;
  dismissed: ReadonlySet<number> | null; // read from localStorage on first use
}

const byWorkspace = new Map<string, WorkspaceNotices>();
const listeners = new Set<() => void>();
const EMPTY: readonly DashboardNotice[] = [];

function of(workspace: string): WorkspaceNotices {
  let notices = byWorkspace.get(workspace);
  if (!notices) {
    notices = { live: EMPTY, announced: new Set(), dismissed: null };
    byWorkspace.set(workspace, notices);
  }
  return notices;
}

function changed(): void {
  for (const listener of [...listeners]) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // a dismissal in another tab
  const onStorage = (event: StorageEvent) => {
    if (event.key !== null && !event.key.startsWith(DISMISSED_PREFIX)) return;
    for (const notices of byWorkspace.values()) notices.dismissed = null;
    listener();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", onStorage);
  };
}

/** Keeps a pushed notice (once: a notice pushed twice is kept once). */
export function addLiveNotice(workspace: string, notice: DashboardNotice): void {
  const notices = of(workspace);
  if (notices.live.some((n) => n.id === notice.id)) return;
  notices.live = [notice, ...notices.live].slice(0, MAX_LIVE_NOTICES);
  changed();
}

export function liveNotices(workspace: string): readonly DashboardNotice[] {
  return byWorkspace.get(workspace)?.live ?? EMPTY;
}

export function useLiveNotices(workspace: string): readonly DashboardNotice[] {
  return useSyncExternalStore(subscribe, () => liveNotices(workspace));
}

/** Of `notices`, those never announced yet; they count as announced from now on. */
export function takeUnannounced(workspace: string, notices: readonly DashboardNotice[]): DashboardNotice[] {
  const { announced } = of(workspace);
  const fresh = notices.filter((n) => !announced.has(n.id));
  for (const n of fresh) announced.add(n.id);
  return fresh;
}

export function dismissedNotices(workspace: string): ReadonlySet<number> {
  const notices = of(workspace);
  if (!notices.dismissed) notices.dismissed = new Set(readDismissed(workspace));
  return notices.dismissed;
}

export function useDismissedNotices(workspace: string): ReadonlySet<number> {
  return useSyncExternalStore(subscribe, () => dismissedNotices(workspace));
}

export function dismissNotice(workspace: string, id: number): void {
  const ids = [...dismissedNotices(workspace)].filter((d) => d !== id);
  ids.push(id);
  const kept = ids.sort((a, b) => a - b).slice(-MAX_DISMISSED);
  try {
    window.localStorage.setItem(DISMISSED_PREFIX + workspace, JSON.stringify(kept));
  } catch {
    // not kept across reloads, still dismissed in this page
  }
  of(workspace).dismissed = new Set(kept);
  changed();
}

function readDismissed(workspace: string): number[] {
  try {
    const parsed: unknown = JSON.parse(window.localStorage.getItem(DISMISSED_PREFIX + workspace) ?? "[]");
    return Array.isArray(parsed) ? parsed.filter((id): id is number => Number.isInteger(id)) : [];
  } catch {
    return [];
  }
}

/** Forgets the session's notices (tests; nothing else needs to). */
export function resetNoticeStore(): void {
  byWorkspace.clear();
  changed();
}
