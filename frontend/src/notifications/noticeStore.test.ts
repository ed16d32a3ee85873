import { afterEach, describe, expect, it } from "vitest";
import { noticeFromLevelEvent, noticeFromPackEvent, noticeTitle, noticeBody } from "./describe";
import {
  DISMISSED_PREFIX,
  addLiveNotice,
  dismissNotice,
  dismissedNotices,
  liveNotices,
  resetNoticeStore,
  takeUnannounced,
} from "./noticeStore";
import type { DashboardNotice } from "./types";

afterEach(() => resetNoticeStore());

const demotion: DashboardNotice = { id: 7, kind: "demotion", at: "2026-11-24T10:00:00Z", workflow_id: "wf-1", reason: "spot checks show acceptance below 85%" };

describe("notice store", () => {
  it("keeps a notice pushed twice once, newest first, per workspace", () => {
    addLiveNotice("1", demotion);
    addLiveNotice("1", { ...demotion });
    addLiveNotice("1", { ...demotion, id: 9 });
    addLiveNotice("2", { ...demotion, id: 3 });
    expect(liveNotices("1").map((n) => n.id)).toEqual([9, 7]);
    expect(liveNotices("2").map((n) => n.id)).toEqual([3]);
  });

  it("hands each notice out to be announced once", () => {
    addLiveNotice("1", demotion);
    expect(takeUnannounced("1", liveNotices("1")).map((n) => n.id)).toEqual([7]);
    addLiveNotice("1", { ...demotion, id: 8 });
    expect(takeUnannounced("1", liveNotices("1")).map((n) => n.id)).toEqual([8]);
    expect(takeUnannounced("1", liveNotices("1"))).toEqual([]);
  });

  it("keeps dismissals in localStorage, per workspace, so they outlive a reload", () => {
    dismissNotice("1", 7);
    dismissNotice("1", 7);
    expect(JSON.parse(window.localStorage.getItem(`${DISMISSED_PREFIX}1`)!)).toEqual([7]);
    resetNoticeStore(); // a reload: the page's memory is gone, the browser's storage is not
    expect(dismissedNotices("1").has(7)).toBe(true);
    expect(dismissedNotices("2").has(7)).toBe(false);
  });

  it("ignores a damaged list of dismissals", () => {
    window.localStorage.setItem(`${DISMISSED_PREFIX}1`, "{not json");
    expect(dismissedNotices("1").size).toBe(0);
  });
});

describe("notices from pushed events", () => {
  it("makes a notice of a demotion only, with the seq of its audit event", () => {
    const base = { workflow_id: "wf-1", level: "COACHING" as const, audit_seq: 12 };
    expect(noticeFromLevelEvent({ ...base, mode: "auto", previous_mode: "coaching" })).toBeNull(); // a promotion
    expect(noticeFromLevelEvent({ ...base })).toBeNull(); // a level change
    expect(noticeFromLevelEvent({ ...base, mode: "coaching", previous_mode: "auto", audit_seq: undefined })).toBeNull();
    const step = noticeFromLevelEvent({ ...base, step_id: "pay", mode: "coaching", previous_mode: "auto", reason: "step set to coaching by lee@x" }, "T");
    expect(step).toEqual({ id: 12, kind: "step_demotion", at: "T", workflow_id: "wf-1", step_id: "pay", reason: "step set to coaching by lee@x" });
    expect(noticeTitle(step!, "Refunds")).toBe("Step “pay” of “Refunds” was demoted to coaching");
    expect(noticeBody(step!)).toBe("Step set to coaching by lee@x.");
  });

  it("names the rules a learned-rule change started and stopped applying, and why", () => {
    const notice = noticeFromPackEvent({
      pack_id: "p1", workflow_id: "wf-1", step_id: "refund", enabled: true, cause: "correction",
      rules_changed_at: "2026-11-24T10:00:00Z", audit_seq: 4, rules: [], stopped: [],
      started: [{ field: "currency", before: "EUR", after: "GBP", count: 3, share: 1 }],
    })!;
    expect(notice.id).toBe(4);
    expect(noticeTitle(notice, "Refunds")).toBe("A learned rule now applies to step “refund” of “Refunds”");
    expect(noticeBody(notice)).toBe('Now applies: currency: "EUR" → "GBP". After operators\' corrections.');
  });
});
