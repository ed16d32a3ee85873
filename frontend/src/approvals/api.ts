/** Paths, query keys and requests of /api/approvals, in one place. */
import { apiGet, apiPost } from "../api/client";
import { newIdempotencyKey } from "../coaching/api";
import type { Approval, ApprovalDecisionRequest, ApprovalDecisionResult, ApprovalPage } from "./types";

/** Pending approvals read at once: a workspace with more has a backlog the queue says so about. */
export const APPROVALS_PER_PAGE = 100;

export const approvalKeys = {
  all: ["approvals"] as const,
  pending: ["approvals", "pending"] as const,
  detail: (id: string) => ["approvals", "detail", id] as const,
};

const approvalPath = (id: string) => `/api/approvals/${encodeURIComponent(id)}`;

export const fetchPendingApprovals = (signal?: AbortSignal) =>
  apiGet<ApprovalPage>(`/api/approvals?status=pending&per_page=${APPROVALS_PER_PAGE}`, { signal });

export const fetchApproval = (id: string, signal?: AbortSignal) => apiGet<Approval>(approvalPath(id), { signal });

/** Decides an approval; a retry of the same call (same key) gets the first answer. */
export const decideApproval = (id: string, body: ApprovalDecisionRequest, key: string = newIdempotencyKey()) =>
  apiPost<ApprovalDecisionResult>(approvalPath(id), body, { headers: { "Idempotency-Key": key } });

/** Takes back your decision on an approval while it is held for the undo window: it is pending again. */
export const undoApproval = (id: string) => apiPost<ApprovalDecisionResult>(`${approvalPath(id)}/undo`);
