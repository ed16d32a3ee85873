import { useSocketEvent } from "../realtime/context";
import { useAuth } from "./useAuth";

/**
 * An admin disabled or removed this person in the open workspace: the server says so on the socket
 * (`access_ended {reason, workspace_id}`) before it disconnects it. The session is read again at once, so the page
 * shows what a reload would (the disabled notice, or the person's other workspace) instead of "reconnecting…" and
 * refusals.
 */
export function AccessEnded() {
  const { recheck } = useAuth();
  useSocketEvent("access_ended", () => recheck());
  return null;
}
