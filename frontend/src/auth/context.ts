import { createContext } from "react";
import type { Role, User, WorkspaceMembership, WorkspaceRef } from "../api/types";

export type AuthStatus =
  /** Asking the server whether a session exists. */
  | "loading"
  /** No session: show the login page. */
  | "anonymous"
  | "authenticated"
  /** The session check failed for another reason than 401 (server down…). */
  | "error";

export interface AuthContextValue {
  status: AuthStatus;
  user: User | null;
  workspaces: WorkspaceMembership[];
  /** Workspaces where an admin disabled the user (they cannot act there). */
  disabledWorkspaces: WorkspaceRef[];
  /** The workspace requests are sent for. */
  workspace: WorkspaceMembership | null;
  /** The user's role in `workspace`. */
  role: Role | null;
  /** How the current session started: a login in this page, or an existing session. */
  signedInVia: "login" | "session" | null;
  /** Why the session check failed, when `status` is "error". */
  error: unknown;
  /** Logs in; rejects with the ApiError (401 wrong credentials, 429 too many attempts…). */
  login(email: string, password: string): Promise<void>;
  /** Ends the session on the server, then forgets it here. Rejects if the server could not be reached. */
  logout(): Promise<void>;
  /** Sends later requests for workspace `id` and refetches everything. */
  switchWorkspace(id: string): void;
  /** Checks the session again (after an "error" status). */
  recheck(): void;
}

export const AuthContext = createContext<AuthContextValue | null>(null);
