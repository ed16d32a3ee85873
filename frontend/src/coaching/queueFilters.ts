/** The queue page's filters, kept in the address (so a filtered queue can be bookmarked and reloaded). */
import type { paths } from "../api/schema";

/** The filters `/api/coaching/queue` and `/api/coaching/questions` take (their page and page size aside). */
export type QueueQuery = Omit<NonNullable<paths["/api/coaching/queue"]["get"]["parameters"]["query"]>, "page" | "per_page">;
type ListedKind = NonNullable<QueueQuery["kind"]>;

export const QUEUE_KINDS = [
  { value: "suggestion", label: "Suggestion" },
  { value: "spot_check", label: "Spot check" },
  { value: "correction_request", label: "Correction request" },
  { value: "human_input", label: "Question (human input)" },
  { value: "clarification", label: "Clarification" },
  { value: "approval", label: "Approval" },
] as const;

export type QueueSection = "approval" | "question" | "suggestion";

const SECTION_OF: Record<string, QueueSection> = {
  suggestion: "suggestion",
  spot_check: "suggestion",
  correction_request: "suggestion",
  human_input: "question",
  clarification: "question",
  approval: "approval",
};

/** Age bands: `older:<s>` waits at least s seconds, `newer:<s>` at most. */
export const AGE_BANDS = [
  { value: "newer:300", label: "Less than 5 min" },
  { value: "newer:3600", label: "Less than 1 h" },
  { value: "older:300", label: "More than 5 min" },
  { value: "older:3600", label: "More than 1 h" },
  { value: "older:86400", label: "More than 1 day" },
] as const;

export interface QueueFilters {
  workflow: string;
  step: string;
  kind: string;
  age: string;
  q: string;
  order: "newest" | "oldest";
}

export function filtersFromParams(params: URLSearchParams): QueueFilters {
  return {
    workflow: params.get("workflow") ?? "",
    step: params.get("step") ?? "",
    kind: params.get("kind") ?? "",
    age: params.get("age") ?? "",
    q: params.get("q") ?? "",
    order: params.get("order") === "oldest" ? "oldest" : "newest",
  };
}

export function paramsOf(filters: QueueFilters): Record<string, string> {
  const out: Record<string, string> = {};
  if (filters.workflow) out.workflow = filters.workflow;
  if (filters.step) out.step = filters.step;
  if (filters.kind) out.kind = filters.kind;
  if (filters.age) out.age = filters.age;
  if (filters.q.trim()) out.q = filters.q;
  if (filters.order === "oldest") out.order = "oldest";
  return out;
}

export const isFiltered = (filters: QueueFilters) =>
  Object.keys(paramsOf({ ...filters, order: "newest" })).length > 0;

/** Which lists the kind filter leaves on the page. */
export function shows(filters: QueueFilters, section: QueueSection): boolean {
  return !filters.kind || SECTION_OF[filters.kind] === section;
}

const LISTED_KINDS: readonly string[] = QUEUE_KINDS.map((k) => k.value).filter((k) => SECTION_OF[k] !== "approval");
const isListedKind = (kind: string): kind is ListedKind => LISTED_KINDS.includes(kind);

/** The API's query (`/api/coaching/queue`, `/api/coaching/questions`) for these filters; {} when none. */
export function apiQueryParams(filters: QueueFilters): QueueQuery {
  const query: QueueQuery = {};
  if (filters.workflow) query.workflow_id = filters.workflow;
  if (filters.step) query.step_id = filters.step;
  if (isListedKind(filters.kind)) query.kind = filters.kind;
  const [band, seconds] = filters.age.split(":");
  if ((band === "older" || band === "newer") && /^\d+$/.test(seconds ?? "")) {
    query[band === "older" ? "min_age_s" : "max_age_s"] = Number(seconds);
  }
  if (filters.q.trim()) query.q = filters.q.trim();
  if (filters.order === "oldest") query.order = "oldest";
  return query;
}

/** The same query as text (the lists' cache keys); "" when none. */
export function apiQuery(filters: QueueFilters): string {
  return new URLSearchParams(Object.entries(apiQueryParams(filters)).map(([name, value]) => [name, String(value)])).toString();
}

/** An approval kept by the filters the client can apply to it (the list is short and read whole). */
export function approvalMatches(
  approval: { execution_id: string | null; agent?: string | null; step_id?: string | null; message?: string; tool?: string | null; created_at?: string; workflow_id?: string | null; workflow_name?: string | null },
  filters: QueueFilters,
  now: number,
): boolean {
  // an approval does not say its workflow: a workflow filter leaves only the lists that do
  if (filters.workflow && approval.workflow_id !== filters.workflow) return false;
  if (filters.step && approval.step_id !== filters.step) return false;
  const [band, seconds] = filters.age.split(":");
  if (approval.created_at && (band === "older" || band === "newer")) {
    const age = (now - Date.parse(approval.created_at)) / 1000;
    if (band === "older" ? age < Number(seconds) : age > Number(seconds)) return false;
  }
  const q = filters.q.trim().toLowerCase();
  if (q) {
    const text = [approval.message, approval.tool, approval.step_id, approval.workflow_name, approval.agent].join(" ").toLowerCase();
    if (!text.includes(q)) return false;
  }
  return true;
}

/** A run's key variables as one short line: `customer=ACME · amount=120` (the first few, values cut short). */
export function keyVariables(variables: Record<string, unknown> | undefined, most = 3): string {
  if (!variables) return "";
  return Object.entries(variables)
    .filter(([, value]) => value !== null && value !== undefined && value !== "")
    .slice(0, most)
    .map(([name, value]) => {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      return `${name}=${text.length > 40 ? `${text.slice(0, 39)}…` : text}`;
    })
    .join(" · ");
}
