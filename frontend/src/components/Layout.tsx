import { useEffect, useRef, type ReactNode } from "react";
import { Link, NavLink, matchPath, useLocation } from "react-router-dom";
import { AccountBar } from "../auth/AccountBar";
import { useAuth } from "../auth/useAuth";
import { InvitationsBanner } from "../auth/InvitationsBanner";
import { NotificationsCenter } from "../notifications/NotificationsCenter";
import { useRealtime } from "../realtime/context";
import { ConnectionBanner } from "../realtime/RealtimeProvider";

/**
 * The signed-in frame: skip link, header (brand, navigation, account) and
 * the page. `focusOnMount` moves focus to the page right away — used just
 * after logging in, when the focused form has gone.
 */
export function Layout({ children, focusOnMount = false }: { children: ReactNode; focusOnMount?: boolean }) {
  const mainRef = useRef<HTMLElement>(null);
  const location = useLocation();
  const firstRender = useRef(true);
  const { status } = useRealtime();
  const { role } = useAuth();
  const lead = role === "lead" || role === "admin";
  const coaching = matchPath("/executions/:id/coach", location.pathname) !== null;
  const queueActive = coaching || matchPath("/queue", location.pathname) !== null;

  // After client-side navigation, move focus to the new page's content so
  // keyboard and screen-reader users start there, as on a full page load.
  // `focusOnMount` only counts on the first run.
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      if (!focusOnMount) return;
    }
    mainRef.current?.focus();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- a new page moves focus; `focusOnMount` only counts on the first run
  }, [location.pathname]);

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="site-header">
        <div className="site-header__inner">
          <Link to="/" className="brand">
            Coach
          </Link>
          <nav aria-label="Main">
            <ul className="nav">
              <li>
                {/* the coaching panel is queue work: "Queue" is the current section there, not "Executions" */}
                <Link to="/queue" className={queueActive ? "active" : ""} aria-current={queueActive ? "page" : undefined}>
                  Queue
                </Link>
              </li>
              <li>
                <NavLink to="/workflows">Workflows</NavLink>
              </li>
              <li>
                <NavLink to="/executions" className={({ isActive }) => (isActive && !coaching ? "active" : "")}
                  aria-current={coaching ? false : undefined}>
                  Executions
                </NavLink>
              </li>
              <li>
                <NavLink to="/plans">Plans</NavLink>
              </li>
              <li>
                <NavLink to="/dashboard">Dashboard</NavLink>
              </li>
              <li>
                <NavLink to="/correction-packs">Correction packs</NavLink>
              </li>
              {lead ? (
                <li>
                  <NavLink to="/policies">Policies</NavLink>
                </li>
              ) : null}
              <li>
                <NavLink to="/tools">Tools</NavLink>
              </li>
              {lead ? (
                <li>
                  <NavLink to="/audit">Audit log</NavLink>
                </li>
              ) : null}
              {role === "admin" ? (
                <li>
                  <NavLink to="/admin">Admin</NavLink>
                </li>
              ) : null}
              <li>
                <a href="/api/docs">API docs</a>
              </li>
            </ul>
          </nav>
          <NotificationsCenter />
          <AccountBar />
        </div>
      </header>
      <ConnectionBanner status={status} />
      <main id="main" ref={mainRef} tabIndex={-1} className="content">
        <InvitationsBanner />
        {children}
      </main>
    </>
  );
}
