import { useQuery } from "@tanstack/react-query";
import { useDocumentTitle } from "../hooks";
import { InvitationsBanner, fetchMyInvitations } from "./InvitationsBanner";
import { LogoutButton } from "./LogoutButton";
import { useAuth } from "./useAuth";

/**
 * Signed in, but with no workspace to act in: invited and not yet a member, or disabled by an admin. Says which,
 * and what to do, instead of an app whose every read is refused and whose live connection never opens.
 */
export default function NoWorkspacePage() {
  useDocumentTitle("No workspace");
  const { user, disabledWorkspaces } = useAuth();
  const invitations = useQuery({
    queryKey: ["my-invitations"],
    queryFn: ({ signal }) => fetchMyInvitations(signal),
  });
  const invited = (invitations.data?.items.length ?? 0) > 0;
  return (
    <>
      <header className="site-header">
        <div className="site-header__inner">
          <span className="brand">Coach</span>
          <div className="account">
            {user ? <span className="account__user">{user.email}</span> : null}
            <LogoutButton />
          </div>
        </div>
      </header>
      <main id="main" className="content content--narrow">
        <h1>You are not a member of any workspace</h1>
        {disabledWorkspaces.length > 0 ? (
          <p>
            An admin disabled your access to{" "}
            {disabledWorkspaces.map((w, i) => (
              <span key={String(w.id)}>
                {i > 0 ? ", " : null}
                <strong>{w.name}</strong>
              </span>
            ))}
            . Ask an admin of that workspace to enable you again; your account and tokens are kept.
          </p>
        ) : null}
        {invited ? (
          <p>Accept an invitation below to join its workspace.</p>
        ) : invitations.isSuccess && disabledWorkspaces.length === 0 ? (
          <p>Ask an admin of a workspace to invite you; the invitation then appears here.</p>
        ) : null}
        <InvitationsBanner />
      </main>
    </>
  );
}
