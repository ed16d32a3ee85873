import { useContext } from "react";
import { AuthContext, type AuthContextValue } from "./context";

/** The signed-in user, their workspaces and the auth actions. Needs an `<AuthProvider>`. */
export function useAuth(): AuthContextValue {
  const value = useContext(AuthContext);
  if (!value) throw new Error("useAuth must be used inside <AuthProvider>");
  return value;
}
