import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { Suspense, lazy, useState } from "react";
import { BrowserRouter, Navigate, Route, Routes, useSearchParams } from "react-router-dom";
import { ApiError } from "./api/client";
import { AuthProvider } from "./auth/AuthProvider";
import LoginPage from "./auth/LoginPage";
import SessionCheckFailedPage from "./auth/SessionCheckFailedPage";
import { useAuth } from "./auth/useAuth";
import { Layout } from "./components/Layout";
import { Loading } from "./components/QueryState";
import { RealtimeProvider } from "./realtime/RealtimeProvider";

// Each page is its own chunk, so later pages don't grow the first download.
const WorkflowsPage = lazy(() => import("./pages/WorkflowsPage"));
const ExecutionsPage = lazy(() => import("./pages/ExecutionsPage"));
const ExecutionDetailPage = lazy(() => import("./pages/ExecutionDetailPage"));
const NotFoundPage = lazy(() => import("./pages/NotFoundPage"));
// Operators: the queue and the CoachingPanel (src/coaching/).
const QueuePage = lazy(() => import("./coaching/QueuePage"));
const CoachingPage = lazy(() => import("./coaching/CoachingPage"));
// Leads: dashboards, correction packs, audit, workflow definitions (src/dashboards/).
const DashboardPage = lazy(() => import("./dashboards/DashboardPage"));
const CorrectionPacksPage = lazy(() => import("./dashboards/CorrectionPacksPage"));
const AuditPage = lazy(() => import("./dashboards/AuditPage"));
const WorkflowDetailPage = lazy(() => import("./dashboards/WorkflowDetailPage"));
const PoliciesPage = lazy(() => import("./policies/PoliciesPage"));
// Authoring: the definition editor (CodeMirror) and the version diff (src/workflows/).
const WorkflowEditorPage = lazy(() => import("./workflows/WorkflowEditorPage"));
const VersionDiffPage = lazy(() => import("./workflows/VersionDiffPage"));
// Admins: members, invitations; everyone: their tokens and preferences (src/admin/).
const AdminPage = lazy(() => import("./admin/AdminPage"));
const SettingsPage = lazy(() => import("./admin/SettingsPage"));
const ToolsPage = lazy(() => import("./tools/ToolsPage"));
// Ad-hoc plans: drafted, approved, executed (src/plans/).
const PlansPage = lazy(() => import("./plans/PlansPage"));
const PlanDetailPage = lazy(() => import("./plans/PlanDetailPage"));

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

  return (
    <RealtimeProvider workspaceId={auth.workspace ? String(auth.workspace.id) : null}>
    <Layout focusOnMount={auth.signedInVia === "login"}>
      <Suspense fallback={<Loading label="Loading page…" />}>
        <Routes>
          <Route path="/" element={<Navigate to="/queue" replace />} />
          <Route path="/queue" element={<QueuePage />} />
          <Route path="/executions/:id/coach" element={<CoachingPage />} />
          <Route path="/dashboard" element={<DashboardPage />} />
          <Route path="/correction-packs" element={<CorrectionPacksPage />} />
          <Route path="/audit" element={<AuditPage />} />
          <Route path="/policies" element={<PoliciesPage />} />
          <Route path="/workflows/new" element={<WorkflowEditorPage />} />
          <Route path="/tools" element={<ToolsPage />} />
          <Route path="/workflows/:id" element={<WorkflowDetailPage />} />
          <Route path="/workflows/:id/edit" element={<WorkflowEditorPage />} />
          <Route path="/workflows/:id/diff" element={<VersionDiffPage />} />
          <Route path="/admin" element={<AdminPage />} />
          <Route path="/settings" element={<SettingsPage />} />
          <Route path="/login" element={<AfterLogin />} />
          <Route path="/workflows" element={<WorkflowsPage />} />
          <Route path="/executions" element={<ExecutionsPage />} />
          <Route path="/executions/:id" element={<ExecutionDetailPage />} />
          <Route path="/plans" element={<PlansPage />} />
          <Route path="/plans/:id" element={<PlanDetailPage />} />
          <Route path="*" element={<NotFoundPage />} />
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
