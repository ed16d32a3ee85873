import { useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { ApiError } from "../api/client";
import { OFFLINE_POLL_MS } from "../coaching/useCoachingSession";
import { useRealtime, useSocketEvent } from "../realtime/context";
import { changedBy, QUEUE_CHANGED, type QueueChanged } from "../realtime/queueChanged";
import { useCoalesced } from "../realtime/useCoalesced";
import { approvalKeys, decideApproval, fetchPendingApprovals } from "./api";
import type { Approval, ApprovalDecisionRequest, ApprovalDecisionResult, ApprovalPage } from "./types";

/** Puts an approval's news into the pending list: a pending one is added or replaced, a decided one leaves. */
export function applyApproval(queryClient: QueryClient, approval: Approval): void {
  queryClient.setQueryData<ApprovalPage>(approvalKeys.pending, (page) => {
    if (!page) return page;
    const had = page.items.some((a) => a.approval_id === approval.approval_id);
    const rest = page.items.filter((a) => a.approval_id !== approval.approval_id);
    if (approval.status !== "pending") return { ...page, items: rest, total: Math.max(0, page.total - (had ? 1 : 0)) };
    if (had) return { ...page, items: page.items.map((a) => (a.approval_id === approval.approval_id ? approval : a)) };
    return { ...page, items: [approval, ...rest], total: page.total + 1 };
  });
  queryClient.setQueryData(approvalKeys.detail(approval.approval_id), approval);
}

/**
 * The workspace's pending approvals, newest first, kept live: `approval_requested` adds one, `approval_decided`
 * updates or removes it at once (then the list is read again, so it ends on the server's state); a cancelled
 * execution (a `queue_changed` with an `execution_update`) expires its approvals, so that re-reads it too. Needs the
 * workspace room.
 */
export function usePendingApprovals() {
  const queryClient = useQueryClient();
  const { status: connection } = useRealtime();
  const query = useQuery({
    queryKey: approvalKeys.pending,
    queryFn: ({ signal }) => fetchPendingApprovals(signal),
    refetchInterval: connection === "online" ? false : OFFLINE_POLL_MS,
  });
  // what a push says is shown at once; the server is read again once per burst of pushes
  const rereadAll = useCoalesced(() => void queryClient.invalidateQueries({ queryKey: approvalKeys.all }));
  const rereadPending = useCoalesced(() => void queryClient.invalidateQueries({ queryKey: approvalKeys.pending }));
  const onNews = (approval: Approval) => {
    if (approval && typeof approval === "object" && "approval_id" in approval) applyApproval(queryClient, approval);
    rereadAll();
  };
  useSocketEvent<Approval>("approval_requested", onNews);
  useSocketEvent<Approval>("approval_decided", onNews);
  useSocketEvent<QueueChanged>(QUEUE_CHANGED, (change) => {
    if (changedBy(change, "execution_update")) rereadPending();
  });
  return query;
}

export interface DecideApprovalVars {
  approval: Approval;
  body: ApprovalDecisionRequest;
}

/** Sends a decision on an approval; the list follows the answer, and a refusal (403, 409) re-reads it. */
export function useApprovalDecision() {
  const queryClient = useQueryClient();
  return useMutation<ApprovalDecisionResult, unknown, DecideApprovalVars>({
    mutationFn: ({ approval, body }) => decideApproval(approval.approval_id, body),
    onSuccess: (result) => {
      if (result?.approval) applyApproval(queryClient, result.approval);
      void queryClient.invalidateQueries({ queryKey: approvalKeys.all });
      void queryClient.invalidateQueries({ queryKey: ["executions"] });
    },
    onError: (error) => {
      if (error instanceof ApiError && (error.status === 403 || error.status === 409)) {
        void queryClient.invalidateQueries({ queryKey: approvalKeys.all });
      }
    },
  });
}

/** What the queue says when a decision on an approval was refused. */
export function refusalText(error: unknown): string {
  if (!(error instanceof ApiError)) return `The decision was not applied: ${error instanceof Error ? error.message : "something went wrong"}.`;
  if (error.status === 403) return `You may not decide this approval: ${error.message}`;
  if (error.status === 409) return `Not applied — ${error.message}`;
  return `The decision was not applied: ${error.message}`;
}
