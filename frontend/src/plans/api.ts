/** Ad-hoc plans (/api/plans): shapes, query keys and requests, in one place. */
import type { components } from "../api/schema";
import { api, textBody, unwrap } from "../api/typed";

type Schemas = components["schemas"];

/** A plan: its definition as given (corrections applied), its execution's status and progress, its approval. */
export type Plan = Schemas["Plan"];
/** `GET /api/plans/<id>/status`: the plan's execution as it runs. */
export type PlanStatus = Schemas["PlanStatus"];
export type PlanMode = Plan["mode"];

export const PLAN_MODES = ["normal", "coaching"] as const satisfies readonly PlanMode[];

/** Whether `value` (a select's) is a plan mode. */
export const isPlanMode = (value: string): value is PlanMode => (PLAN_MODES as readonly string[]).includes(value);

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
] as const satisfies readonly Plan["status"][];

/** Whether `value` (the filter of the URL) is a status the list filters by. */
export const isPlanStatus = (value: string): value is (typeof PLAN_STATUSES)[number] =>
  (PLAN_STATUSES as readonly string[]).includes(value);

export const PLANS_PER_PAGE = 20;

const plan = (plan_id: string) => ({ params: { path: { plan_id } } });

export const planKeys = {
  all: ["plans"] as const,
  list: (status: string, page: number) => ["plans", "list", status, page] as const,
  detail: (id: string) => ["plans", "detail", id] as const,
  status: (id: string) => ["plans", "status", id] as const,
};

/** A page of plans, of one status or all (""). */
export function fetchPlans(status: Plan["status"] | "", page: number, signal?: AbortSignal) {
  const query = { page, per_page: PLANS_PER_PAGE, ...(status ? { status } : {}) };
  return unwrap(api.GET("/api/plans", { params: { query }, signal }));
}

export const fetchPlan = (id: string, signal?: AbortSignal) => unwrap(api.GET("/api/plans/{plan_id}", { ...plan(id), signal }));

export const fetchPlanStatus = (id: string, signal?: AbortSignal) =>
  unwrap(api.GET("/api/plans/{plan_id}/status", { ...plan(id), signal }));

/**
 * What the new-plan form sends: a JSON object, or YAML text (sent as application/yaml, as the server reads it). The
 * JSON is what the person wrote, checked by the server (its 422 names each field): it is sent as the text it parses to.
 */
export type PlanSource = { json: Record<string, unknown> } | { yaml: string };

export function createPlan(source: PlanSource) {
  const body = "json" in source ? textBody(JSON.stringify(source.json), "application/json") : textBody(source.yaml, "application/yaml");
  return unwrap(api.POST("/api/plans", body));
}

export const approvePlan = (id: string) => unwrap(api.POST("/api/plans/{plan_id}/approve", plan(id)));

export const executePlan = (id: string, body: { mode?: PlanMode; variables?: Record<string, unknown> }) =>
  unwrap(api.POST("/api/plans/{plan_id}/execute", { ...plan(id), body }));

export const savePlanAsWorkflow = (id: string, name: string) =>
  unwrap(api.POST("/api/plans/{plan_id}/save-as-workflow", { ...plan(id), body: { name: name || null } }));
