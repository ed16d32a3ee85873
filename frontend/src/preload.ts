/**
 * What a page load starts before React renders its first frame, so that the waits overlap instead of following
 * one another: the session check, the chunk of the page asked for, and (for a returning user) the page's first
 * reads. Without it, the session check waited for the first render, the page's chunk for the check's answer, and
 * the page's reads for its chunk.
 */
import { matchPath } from "react-router-dom";
import type { QueryClient } from "@tanstack/react-query";
import { preloadPage } from "./App";
import { CSRF_COOKIE, getSelectedWorkspace, readCookie } from "./api/client";
import { workflowOptionsQuery } from "./api/workflowOptions";
import { approvalKeys, fetchPendingApprovals } from "./approvals/api";
import { startSessionCheck } from "./auth/AuthProvider";
import { coachingKeys, fetchExecution, fetchPending, fetchQuestions, fetchQueue, fetchStats } from "./coaching/api";

/** The first reads of the page at `pathname` + `search` (the ones it makes when it mounts), or none. */
function firstReads(queryClient: QueryClient, pathname: string, search: string): readonly (readonly unknown[])[] {
  // the queue, unfiltered ("/" leads there); a filtered queue reads other pages, and fetches them itself
  if ((pathname === "/" || pathname === "/queue") && !search) {
    void queryClient.prefetchQuery({ queryKey: coachingKeys.queue(1), queryFn: ({ signal }) => fetchQueue(1, signal) });
    void queryClient.prefetchQuery({
      queryKey: coachingKeys.questions(""),
      queryFn: ({ signal }) => fetchQuestions(signal),
    });
    void queryClient.prefetchQuery({ queryKey: approvalKeys.pending, queryFn: ({ signal }) => fetchPendingApprovals(signal) });
    void queryClient.prefetchQuery(workflowOptionsQuery);
    return [coachingKeys.queue(1), coachingKeys.questions(""), approvalKeys.pending, workflowOptionsQuery.queryKey];
  }
  const coach = matchPath("/executions/:id/coach", pathname);
  if (coach?.params.id) {
    const id = coach.params.id;
    void queryClient.prefetchQuery({ queryKey: coachingKeys.execution(id), queryFn: ({ signal }) => fetchExecution(id, signal) });
    void queryClient.prefetchQuery({ queryKey: coachingKeys.pending(id), queryFn: ({ signal }) => fetchPending(id, signal) });
    void queryClient.prefetchQuery({ queryKey: coachingKeys.stats(id), queryFn: ({ signal }) => fetchStats(id, signal) });
    return [coachingKeys.execution(id), coachingKeys.pending(id), coachingKeys.stats(id)];
  }
  return [];
}

export function startPageLoad(queryClient: QueryClient, { pathname, search }: { pathname: string; search: string }): void {
  const session = startSessionCheck(preloadPage(pathname));
  // Only for a returning user (the CSRF cookie is set while a session lives), in the workspace picked last time:
  // a logged-out visitor's reads would only be refused.
  const workspace = getSelectedWorkspace();
  if (!workspace || !readCookie(CSRF_COOKIE)) return;
  const keys = firstReads(queryClient, pathname, search);
  if (keys.length === 0) return;
  // The session settles on that workspace when the user is still a member there (AuthProvider): otherwise these
  // answers are another workspace's, and go before anything shows them (this runs before the provider's own
  // handler of the same answer, which was attached later).
  session.then(
    (answer) => {
      if (answer.workspaces.some((w) => String(w.id) === workspace || w.slug === workspace)) return;
      for (const queryKey of keys) queryClient.removeQueries({ queryKey, exact: true });
    },
    () => {
      for (const queryKey of keys) queryClient.removeQueries({ queryKey, exact: true });
    },
  );
}
