/**
 * Shapes of the Coach JSON API, as the frontend reads them: names for the types generated from the server's
 * OpenAPI document (./schema.d.ts, by openapi-typescript from ./openapi.json; `make api-types` writes both, and
 * tests fail when either drifts from the server). Nothing here is written by hand: a field or a status the server
 * adds reaches these types when the document is generated again (docs/api.md, "The contract").
 */
import type { components } from "./schema";

type Schemas = components["schemas"];

/** A workflow definition's current (or asked-for) version, with its level and mode. */
export type Workflow = Schemas["Workflow"];

export type Execution = Schemas["Execution"];
export type ExecutionStep = Schemas["StepResult"];
export type ExecutionProgress = Schemas["Progress"];
export type ExecutionStatus = Execution["status"];
export type StepStatus = ExecutionStep["status"];
export type ExecutionMode = Execution["mode"];

/** One page of a paginated list endpoint (every `…Page` of the document has this shape). */
export type Page<T> = Omit<Schemas["ExecutionPage"], "items"> & { items: T[] };

/** Body of `POST /api/executions/`. */
export type StartExecutionRequest = Schemas["StartArgs"];

/** What `POST /api/executions/` answers: the new execution. */
export type StartExecutionResponse = Schemas["Execution"];

/** The server's error envelope: `{"error": {"code", "message", "details"}}`. */
export type ErrorBody = Schemas["Error"];

export const TERMINAL_STATUSES: ReadonlySet<string> = new Set<ExecutionStatus>(["completed", "failed", "cancelled"]);

export function isTerminalStatus(status: string | undefined | null): boolean {
  return status != null && TERMINAL_STATUSES.has(status);
}

/** One of the user's workspaces, with the user's role in it. */
export type WorkspaceMembership = Schemas["WorkspaceRole"];

/** A role in one workspace, lowest to highest: operator < lead < admin. */
export type Role = WorkspaceMembership["role"];

export type User = Schemas["User"];

/** What `POST /api/auth/login` and `GET /api/auth/me` answer. */
export type AuthSession = Schemas["Me"];

/** A workspace named without a role. */
export type WorkspaceRef = Schemas["WorkspaceRef"];

/** Body of `POST /api/auth/login`. */
export type LoginRequest = Schemas["LoginArgs"];

/** A pending invitation of the signed-in user (`GET /api/auth/invitations`). */
export type Invitation = Schemas["MyInvitation"];
