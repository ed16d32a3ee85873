import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Link } from "react-router-dom";
import { api, unwrap } from "../api/typed";
import { formatDateTime } from "../format";
import { noticeBody, noticeSentence, noticeTitle, workflowNameOf } from "./describe";
import { dismissNotice, takeUnannounced, useDismissedNotices, useLiveNotices, useNoticeWorkspace } from "./noticeStore";
import "./notifications.css";
import type { DashboardNotice } from "./types";

export const noticesKey = ["notices"] as const;

/** `GET /api/notices`: the workspace's recent demotions and learned-rule changes, from the audit log. */
export function useServerNotices() {
  return useQuery({
    queryKey: noticesKey,
    queryFn: ({ signal }) => unwrap(api.GET("/api/notices", { signal })),
    staleTime: 30_000,
  });
}

/** Pushed and read-back notices as one list (a notice in both is the server's), newest first. */
export function mergeNotices(server: readonly DashboardNotice[] | undefined, live: readonly DashboardNotice[]): DashboardNotice[] {
  const byId = new Map<number, DashboardNotice>();
  for (const notice of live) byId.set(notice.id, notice);
  for (const notice of server ?? []) byId.set(notice.id, { ...byId.get(notice.id), ...notice });
  return [...byId.values()].sort((a, b) => b.id - a.id);
}

function linkOf(notice: DashboardNotice): { to: string; label: string } | null {
  if (notice.kind === "learned_rule_change" && notice.pack_id)
    return { to: `/correction-packs?pack=${encodeURIComponent(notice.pack_id)}`, label: "Open the pack" };
  if (notice.kind === "gateway_demotion") return { to: "/tools", label: "Open the tools" };
  if (notice.workflow_id) return { to: `/workflows/${encodeURIComponent(notice.workflow_id)}`, label: "Open the workflow" };
  return null;
}

/**
 * The dashboard's notices: demotions and learned-rule changes, pushed ones (also those that arrived while the
 * user was on another page) and the recent ones the server keeps, each dismissible for good. Pushed notices are
 * announced to screen readers politely, once each.
 */
export function DashboardNotices({ workflows }: { workflows?: readonly { workflow_id: string; name: string }[] }) {
  const workspace = useNoticeWorkspace();
  const server = useServerNotices();
  const live = useLiveNotices(workspace);
  const dismissed = useDismissedNotices(workspace);
  const names = new Map((workflows ?? []).map((w) => [w.workflow_id, w.name]));
  const nameOf = (notice: DashboardNotice) => workflowNameOf(notice, names);
  const notices = mergeNotices(server.data?.items, live).filter((n) => !dismissed.has(n.id));
  const [announcement, setAnnouncement] = useState("");
  const headingRef = useRef<HTMLHeadingElement>(null);
  const listRef = useRef<HTMLUListElement>(null);

  useEffect(() => {
    const fresh = takeUnannounced(workspace, live.filter((n) => !dismissed.has(n.id)));
    if (fresh.length === 0) return;
    const sentences = fresh.map((n) => noticeSentence(n, nameOf(n)));
    setAnnouncement(fresh.length === 1 ? sentences[0] : `${fresh.length} new notices. ${sentences.join(" ")}`);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only new pushed notices are a reason to announce (not names loading, nor a dismissal)
  }, [live, workspace]);

  const dismiss = (notice: DashboardNotice, index: number) => {
    dismissNotice(workspace, notice.id);
    // focus goes to the next notice's Dismiss (the previous one's for the last), or to the heading
    const buttons = listRef.current?.querySelectorAll<HTMLButtonElement>("[data-dismiss]");
    const next = buttons?.[index + 1] ?? buttons?.[index - 1];
    if (next) next.focus();
    else headingRef.current?.focus();
  };

  return (
    <>
      <p className="visually-hidden" role="status" data-testid="notices-announcement">
        {announcement}
      </p>
      {notices.length > 0 ? (
        <section className="dashboard-notices" aria-labelledby="notices-heading">
          <h2 id="notices-heading" ref={headingRef} tabIndex={-1}>
            Notices
          </h2>
          <ul ref={listRef} className="dashboard-notices__list">
            {notices.map((notice, index) => {
              const title = noticeTitle(notice, nameOf(notice));
              const link = linkOf(notice);
              return (
                <li key={notice.id} className="site-notice" data-kind={notice.kind} data-notice-id={notice.id}>
                  <span className="site-notice__symbol" aria-hidden="true">
                    {notice.kind === "learned_rule_change" ? "✎" : "▼"}
                  </span>
                  <div className="site-notice__text">
                    <p className="site-notice__title">{title}</p>
                    <p>{noticeBody(notice)}</p>
                    <p className="site-notice__meta">
                      <time dateTime={notice.at}>{formatDateTime(notice.at)}</time>
                      {link ? (
                        <>
                          {" · "}
                          <Link to={link.to}>{link.label}</Link>
                        </>
                      ) : null}
                    </p>
                  </div>
                  <button
                    type="button"
                    className="button button--secondary site-notice__dismiss"
                    data-dismiss
                    aria-label={`Dismiss: ${title}`}
                    onClick={() => dismiss(notice, index)}
                  >
                    Dismiss
                  </button>
                </li>
              );
            })}
          </ul>
        </section>
      ) : null}
    </>
  );
}
