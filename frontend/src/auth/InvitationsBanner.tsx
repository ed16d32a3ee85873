import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { errorMessage } from "../api/client";
import { api, omitWorkspace, unwrap } from "../api/typed";
import { useAuth } from "./useAuth";

export const INVITATIONS_PATH = "/api/auth/invitations";

/** The signed-in user's pending invitations (asked without a workspace: they are to other workspaces). */
export const fetchMyInvitations = (signal?: AbortSignal) => unwrap(api.GET(INVITATIONS_PATH, { ...omitWorkspace, signal }));

/**
 * The signed-in user's pending invitations to other workspaces, with Accept
 * and Decline. Nobody joins a workspace without accepting here (or through
 * the API); accepting adds it to the workspace switcher.
 */
export function InvitationsBanner() {
  const { recheck } = useAuth();
  const queryClient = useQueryClient();
  const invitations = useQuery({
    queryKey: ["my-invitations"],
    queryFn: ({ signal }) => fetchMyInvitations(signal),
  });
  const answer = useMutation({
    mutationFn: ({ id, verb }: { id: string; verb: "accept" | "decline" }) =>
      unwrap(
        api.POST(`${INVITATIONS_PATH}/{invitation_id}/${verb}`, { ...omitWorkspace, params: { path: { invitation_id: id } } }),
      ),
    onSuccess: (_data, { verb }) => {
      void queryClient.invalidateQueries({ queryKey: ["my-invitations"] });
      if (verb === "accept") recheck(); // the new workspace joins the switcher
    },
  });
  const items = invitations.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <section className="notice notice--info invitations" aria-label="Invitations">
      <p className="notice__title">You are invited</p>
      <ul>
        {items.map((inv) => (
          <li key={inv.id}>
            <span>
              {inv.workspace.name} as {inv.role} (by {inv.invited_by})
            </span>{" "}
            <button type="button" className="button" disabled={answer.isPending}
              onClick={() => answer.mutate({ id: inv.id, verb: "accept" })}>
              Accept
            </button>{" "}
            <button type="button" className="button button--secondary" disabled={answer.isPending}
              onClick={() => answer.mutate({ id: inv.id, verb: "decline" })}>
              Decline
            </button>
          </li>
        ))}
      </ul>
      {answer.isError ? <p role="alert">{errorMessage(answer.error)}</p> : null}
    </section>
  );
}
