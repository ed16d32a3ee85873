/**
 * Shapes of the Coach JSON API, as the frontend reads them.
 *
 * Keep these in step with the Flask side's responses; fields the UI does
 * not rely on yet are left loose (`unknown`) on purpose.
 */

/** A string union that still accepts values the server adds later. */
type OpenUnion<T extends string> = T | (string & {});

export type ExecutionStatus = OpenUnion<
  | "draft"
  | "approved"
  | "pending"
  | "queued"
  | "running"
  | "waiting"
  | "paused"
  | "waiting_decision"
  | "waiting_clarification"
  | "waiting_correction"
  | "waiting_approval"
  | "resumed"
  | "completed"
  | "failed"
  | "cancelled"
>;

export type StepStatus = OpenUnion<
  "pending" | "running" | "waiting" | "completed" | "failed" | "skipped" | "cancelled"
>;

export type ExecutionMode = OpenUnion<"normal" | "coaching" | "auto">;

export interface Workflow {
  id: string;
  version: number | string;
  name: string;
  description?: string | null;
  level: number | string;
  mode: string;
  /** Step definitions; their shape belongs to the workflow engine. */
  steps: unknown[];
  /** Declared input variables: name → `{type, default, required, description}`. */
  variables?: Record<string, unknown>;
  latest_version?: number;
}

export interface ExecutionProgress {
  done: number;
  total: number;
  percent: number;
}

export interface ExecutionStep {
  step_id: string;
  status: StepStatus;
  output: unknown;
  error?: unknown;
  decision?: unknown;
  /** The policy's verdict on the step's call (DESIGN.md §4's evaluate answer), when it has one. */
  policy?: import("../approvals/types").PolicyVerdict | null;
  /** The step's latest approval. */
  approval?: { approval_id: string; status: string; kind: string } | null;
  name?: string;
  type?: string | null;
  tool?: string | null;
  /** What a correction may change, as written (corrections applied). */
  definition?: import("../control/api").StepUpdate;
  /** The JSON Schema of the step's tool's params. */
  params_schema?: Record<string, unknown> | null;
}

export interface Execution {
  execution_id: string;
  workflow_id: string;
  workflow_version: number | string;
  /** In lists: the workflow's current name. */
  workflow_name?: string | null;
  mode: ExecutionMode;
  status: ExecutionStatus;
  progress: ExecutionProgress;
  steps: ExecutionStep[];
  is_coaching: boolean;
  /** Execution-level failure reason, when the server sends one. */
  error?: unknown;
  /** What a human is asked, while waiting (an approval: its id and message; a question; its deadline). */
  gate?: import("../control/types").Gate | null;
  variables?: Record<string, unknown>;
  created_at?: string;
  started_at?: string | null;
  finished_at?: string | null;
  /** How a trigger started it (GET by id only); null when a person or a script did (docs/triggers.md). */
  trigger?: ExecutionTrigger | null;
}

/** The incoming webhook or cron schedule that started an execution. */
export interface ExecutionTrigger {
  kind: "webhook" | "schedule";
  name: string;
  hook_id: string | null;
  delivery_id: string | null;
  schedule_id: string | null;
  fire_at: string | null;
  at: string | null;
}

/** One page of a paginated list endpoint. */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  per_page: number;
}

/** Body of `POST /api/executions/`. */
export interface StartExecutionRequest {
  workflow_id: string;
  variables: Record<string, unknown>;
  mode: ExecutionMode;
}

/** What `POST /api/executions/` answers: at least the new execution's id. */
export type StartExecutionResponse = Pick<Execution, "execution_id"> & Partial<Execution>;

/** The server's error envelope: `{"error": {"code", "message", "details"}}`. */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    details?: unknown;
  };
}

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

export function isTerminalStatus(status: string | undefined | null): boolean {
  return status != null && TERMINAL_STATUSES.has(status);
}

/** A role in one workspace, lowest to highest: operator < lead < admin. */
export type Role = OpenUnion<"operator" | "lead" | "admin">;

export interface User {
  id: string | number;
  email: string;
  name?: string | null;
}

/** One of the user's workspaces, with the user's role in it. */
export interface WorkspaceMembership {
  id: string | number;
  slug: string;
  name: string;
  role: Role;
}

/** What `POST /api/auth/login` and `GET /api/auth/me` answer. */
export interface AuthSession {
  user: User;
  workspaces: WorkspaceMembership[];
  /** The workspace the session uses when a request names none. */
  workspace_id: string | number | null;
  /** The user's role in `workspace_id`. */
  role?: Role | null;
  csrf_token?: string;
  /** Workspaces where an admin disabled the user's membership. */
  disabled_workspaces?: WorkspaceRef[];
}

/** A workspace named without a role. */
export interface WorkspaceRef {
  id: string | number;
  slug: string;
  name: string;
}

/** Body of `POST /api/auth/login`. */
export interface LoginRequest {
  email: string;
  password: string;
}

/** A pending invitation of the signed-in user (`GET /api/auth/invitations`). */
export interface Invitation {
  id: string;
  workspace: { id: string; slug: string; name: string };
  role: string;
  invited_by: string;
  status: string;
  created_at: string;
}
