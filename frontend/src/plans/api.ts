/** Ad-hoc plans (/api/plans): shapes, query keys and requests, in one place. */
import { apiGet, apiPost, type RequestOptions } from "../api/client";
import type { ExecutionProgress, Page, Workflow } from "../api/types";

export const PLAN_MODES = ["normal", "coaching"] as const;
export type PlanMode = (typeof PLAN_MODES)[number];

/** The statuses a plan goes through: draft -> approved -> its execution's. */
export const PLAN_STATUSES = [
  "draft",
  "approved",
  "pending",
  "running",
  "waiting_decision",
  "waiting_clarification",
  "waiting_correction",
  "waiting_approval",
  "completed",
  "failed",
  "cancelled",
] as const;

export interface Plan {
  plan_id: string;
  execution_id: string;
  status: string;
  mode: string;
  name: string;
  description?: string;
  variables: Record<string, unknown>;
  /** The variables it runs (or would run) with. */
  values: Record<string, unknown>;
  /** As given, with corrections applied. */
  steps: Record<string, unknown>[];
  progress: ExecutionProgress;
  created_by: string;
  created_at: string;
  approved_by: string | null;
  approved_at: string | null;
  approver_role: string | null;
  saved_workflow_id: string | null;
  corrected_steps: string[];
}

export interface PlanStatus {
  plan_id: string;
  status: string;
  progress: ExecutionProgress;
  current_step: string | null;
  started_at: string | null;
  finished_at: string | null;
  duration_s: number | null;
  error?: Record<string, unknown> | null;
}

export const PLANS_PER_PAGE = 20;

const planPath = (id: string) => `/api/plans/${encodeURIComponent(id)}`;

export const planKeys = {
  all: ["plans"] as const,
  list: (status: string, page: number) => ["plans", "list", status, page] as const,
  detail: (id: string) => ["plans", "detail", id] as const,
  status: (id: string) => ["plans", "status", id] as const,
};

export function fetchPlans(status: string, page: number, signal?: AbortSignal) {
  const query = new URLSearchParams({ page: String(page), per_page: String(PLANS_PER_PAGE) });
  if (status) query.set("status", status);
  return apiGet<Page<Plan>>(`/api/plans?${query}`, { signal });
}

export const fetchPlan = (id: string, signal?: AbortSignal) => apiGet<Plan>(planPath(id), { signal });

export const fetchPlanStatus = (id: string, signal?: AbortSignal) =>
  apiGet<PlanStatus>(`${planPath(id)}/status`, { signal });

/** What the new-plan form sends: a JSON object, or YAML text (sent as application/yaml, as the server reads it). */
export type PlanSource = { json: Record<string, unknown> } | { yaml: string };

export function createPlan(source: PlanSource) {
  if ("json" in source) return apiPost<Plan>("/api/plans", source.json);
  const options: RequestOptions = { contentType: "application/yaml" };
  return apiPost<Plan>("/api/plans", source.yaml, options);
}

export const approvePlan = (id: string) => apiPost<Plan>(`${planPath(id)}/approve`);

export const executePlan = (id: string, body: { mode?: string; variables?: Record<string, unknown> }) =>
  apiPost<Plan>(`${planPath(id)}/execute`, body);

export const savePlanAsWorkflow = (id: string, name: string) =>
  apiPost<Workflow>(`${planPath(id)}/save-as-workflow`, { name: name || null });
