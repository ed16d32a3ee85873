/** Paths, query keys and requests of /api/approvals, in one place. */
import { api, unwrap } from "../api/typed";
import { newIdempotencyKey } from "../coaching/api";
import type { ApprovalDecisionRequest } from "./types";

/** Pending approvals read at once: a workspace with more has a backlog the queue says so about. */
export const APPROVALS_PER_PAGE = 100;

export const approvalKeys = {
  all: ["approvals"] as const,
  pending: ["approvals", "pending"] as const,
  detail: (id: string) => ["approvals", "detail", id] as const,
};

const approval = (id: string) => ({ path: { approval_id: id } });

export const fetchPendingApprovals = (signal?: AbortSignal) =>
  unwrap(api.GET("/api/approvals", { params: { query: { status: "pending", per_page: APPROVALS_PER_PAGE } }, signal }));

export const fetchApproval = (id: string, signal?: AbortSignal) =>
  unwrap(api.GET("/api/approvals/{approval_id}", { params: approval(id), signal }));

/** Decides an approval; a retry of the same call (same key) gets the first answer. */
export const decideApproval = (id: string, body: ApprovalDecisionRequest, key: string = newIdempotencyKey()) =>
  unwrap(api.POST("/api/approvals/{approval_id}", { params: approval(id), body, headers: { "Idempotency-Key": key } }));

/** Takes back your decision on an approval while it is held for the undo window: it is pending again. */
export const undoApproval = (id: string) =>
  unwrap(api.POST("/api/approvals/{approval_id}/undo", { params: approval(id) }));
