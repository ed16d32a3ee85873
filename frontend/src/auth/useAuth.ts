import { useContext } from "react";
import { satisfies } from "../approvals/eligibility";
import { AuthContext, type AuthContextValue } from "./context";

/** The signed-in user, their workspaces and the auth actions. Needs an `<AuthProvider>`. */
export function useAuth(): AuthContextValue {
  const value = useContext(AuthContext);
  if (!value) throw new Error("useAuth must be used inside <AuthProvider>");
  return value;
}

/**
 * Whether the signed-in user may use the lead's controls here (promote, demote, thresholds, packs, step modes):
 * operators are not shown buttons the server would refuse. False outside an `<AuthProvider>`.
 */
export function useIsLead(): boolean {
  return satisfies(useContext(AuthContext)?.role ?? null, "lead");
}

/** Whether the signed-in user is an admin here: only an admin may force a promotion the evidence does not allow. */
export function useIsAdmin(): boolean {
  return satisfies(useContext(AuthContext)?.role ?? null, "admin");
}
