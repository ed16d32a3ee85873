import { NavLink } from "react-router-dom";
import { useKeptPushSubscription } from "../notifications/webPush";
import { LogoutButton } from "./LogoutButton";
import { useAuth } from "./useAuth";
import { WorkspaceSwitcher } from "./WorkspaceSwitcher";

/** The header's right side: who is signed in, which workspace, their settings, and Log out. */
export function AccountBar() {
  const { user } = useAuth();
  useKeptPushSubscription(Boolean(user)); // the browser may have replaced its push subscription since the last visit
  return (
    <div className="account">
      {user ? (
        <p className="account__user">
          <span className="visually-hidden">Signed in as </span>
          {user.email}
        </p>
      ) : null}
      <WorkspaceSwitcher />
      {/* one's own settings: keyboard shortcuts, API tokens */}
      <NavLink to="/settings" className="account__settings">
        Settings
      </NavLink>
      <LogoutButton />
    </div>
  );
}
