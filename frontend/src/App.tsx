import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { Suspense, useState } from "react";
import { BrowserRouter, Navigate, Route, Routes, matchRoutes, useSearchParams } from "react-router-dom";
import { ApiError } from "./api/client";
import { AuthProvider } from "./auth/AuthProvider";
import LoginPage from "./auth/LoginPage";
import NoWorkspacePage from "./auth/NoWorkspacePage";
import SessionCheckFailedPage from "./auth/SessionCheckFailedPage";
import { useAuth } from "./auth/useAuth";
import { Layout } from "./components/Layout";
import { Loading } from "./components/QueryState";
import { lazyPage, type LazyPage } from "./lazyPage";
import { RealtimeProvider } from "./realtime/RealtimeProvider";
import { AccessEnded } from "./auth/AccessEnded";

// Each page is its own chunk, so later pages don't grow the first download. A page load fetches its page's chunk
// while the session is checked (`preloadPage`, from main.tsx).
const WorkflowsPage = lazyPage(() => import("./pages/WorkflowsPage"));
const ExecutionsPage = lazyPage(() => import("./pages/ExecutionsPage"));
const ExecutionDetailPage = lazyPage(() => import("./pages/ExecutionDetailPage"));
const NotFoundPage = lazyPage(() => import("./pages/NotFoundPage"));
// Operators: the queue and the CoachingPanel (src/coaching/).
const QueuePage = lazyPage(() => import("./coaching/QueuePage"));
const CoachingPage = lazyPage(() => import("./coaching/CoachingPage"));
// Leads: dashboards, correction packs, audit, workflow definitions (src/dashboards/).
const DashboardPage = lazyPage(() => import("./dashboards/DashboardPage"));
const CorrectionPacksPage = lazyPage(() => import("./dashboards/CorrectionPacksPage"));
const AuditPage = lazyPage(() => import("./dashboards/AuditPage"));
const WorkflowDetailPage = lazyPage(() => import("./dashboards/WorkflowDetailPage"));
const PoliciesPage = lazyPage(() => import("./policies/PoliciesPage"));
// Authoring: the definition editor (CodeMirror) and the version diff (src/workflows/).
const WorkflowEditorPage = lazyPage(() => import("./workflows/WorkflowEditorPage"));
const VersionDiffPage = lazyPage(() => import("./workflows/VersionDiffPage"));
// Admins: members, invitations; everyone: their tokens and preferences (src/admin/).
const AdminPage = lazyPage(() => import("./admin/AdminPage"));
const SettingsPage = lazyPage(() => import("./admin/SettingsPage"));
const ToolsPage = lazyPage(() => import("./tools/ToolsPage"));
// Ad-hoc plans: drafted, approved, executed (src/plans/).
const PlansPage = lazyPage(() => import("./plans/PlansPage"));
const PlanDetailPage = lazyPage(() => import("./plans/PlanDetailPage"));

/** The signed-in routes' pages ("/" goes to the queue; "/login" to `?next=`). */
const PAGES: readonly { path: string; page: LazyPage }[] = [
  { path: "/queue", page: QueuePage },
  { path: "/executions/:id/coach", page: CoachingPage },
  { path: "/dashboard", page: DashboardPage },
  { path: "/correction-packs", page: CorrectionPacksPage },
  { path: "/audit", page: AuditPage },
  { path: "/policies", page: PoliciesPage },
  { path: "/workflows/new", page: WorkflowEditorPage },
  { path: "/tools", page: ToolsPage },
  { path: "/workflows/:id", page: WorkflowDetailPage },
  { path: "/workflows/:id/edit", page: WorkflowEditorPage },
  { path: "/workflows/:id/diff", page: VersionDiffPage },
  { path: "/admin", page: AdminPage },
  { path: "/settings", page: SettingsPage },
  { path: "/workflows", page: WorkflowsPage },
  { path: "/executions", page: ExecutionsPage },
  { path: "/executions/:id", page: ExecutionDetailPage },
  { path: "/plans", page: PlansPage },
  { path: "/plans/:id", page: PlanDetailPage },
  { path: "*", page: NotFoundPage },
];

/** Starts fetching the chunk of the page at `pathname` ("/" is the queue's; "/login" has none); settles with it. */
export function preloadPage(pathname: string): Promise<unknown> {
  if (pathname === "/login") return Promise.resolve();
  const routes = [{ path: "/", page: QueuePage }, ...PAGES];
  const page = matchRoutes(routes, pathname)?.[0]?.route.page;
  // a chunk that fails to load here is fetched again when the page renders, which shows the error
  return page ? page.preload().catch(() => undefined) : Promise.resolve();
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        // A 4xx will not fix itself: show it at once. Retry the rest twice.
        retry: (failureCount, error) =>
          error instanceof ApiError && error.status >= 400 && error.status < 500 ? false : failureCount < 2,
      },
      mutations: { retry: false },
    },
  });
}

/** A same-site path from `?next=`, or "/" (never another origin). */
export function safeNextPath(next: string | null): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return "/";
  return next;
}

/** `/login` once logged in: go where `?next=` says, or home. */
function AfterLogin() {
  const [params] = useSearchParams();
  return <Navigate to={safeNextPath(params.get("next"))} replace />;
}

function FullPageLoading({ label }: { label: string }) {
  return (
    <main id="main" className="content">
      <Loading label={label} />
    </main>
  );
}

export function AppRoutes() {
  const auth = useAuth();

  if (auth.status === "loading") return <FullPageLoading label="Checking your session…" />;

  if (auth.status !== "authenticated") {
    // Logged out, every address shows the login page (part of the first
    // chunk, as logged-out visitors see nothing else). The address is kept so
    // the wanted page opens after logging in.
    return auth.status === "error" ? <SessionCheckFailedPage /> : <LoginPage />;
  }

  // Signed in with no workspace to act in (invited, or disabled by an admin): say so, with no live connection
  // to fail ("Offline") and no page whose reads are all refused.
  if (auth.workspaces.length === 0) return <NoWorkspacePage />;

  return (
    <RealtimeProvider workspaceId={auth.workspace ? String(auth.workspace.id) : null}>
    <AccessEnded />
    <Layout focusOnMount={auth.signedInVia === "login"}>
      <Suspense fallback={<Loading label="Loading page…" />}>
        <Routes>
          <Route path="/" element={<Navigate to="/queue" replace />} />
          <Route path="/login" element={<AfterLogin />} />
          {PAGES.map(({ path, page: Page }) => (
            <Route key={path} path={path} element={<Page />} />
          ))}
        </Routes>
      </Suspense>
    </Layout>
    </RealtimeProvider>
  );
}

export default function App({ queryClient }: { queryClient?: QueryClient }) {
  const [client] = useState(() => queryClient ?? createQueryClient());
  return (
    <QueryClientProvider client={client}>
      <BrowserRouter>
        <AuthProvider>
          <AppRoutes />
        </AuthProvider>
      </BrowserRouter>
    </QueryClientProvider>
  );
}
