import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { Suspense, lazy, useEffect, useRef, useState, type ReactNode } from "react";
import { BrowserRouter, Link, NavLink, Navigate, Route, Routes, useLocation } from "react-router-dom";
import { ApiError } from "./api/client";
import { Loading } from "./components/QueryState";

// Each page is its own chunk, so later pages don't grow the first download.
const WorkflowsPage = lazy(() => import("./pages/WorkflowsPage"));
const ExecutionsPage = lazy(() => import("./pages/ExecutionsPage"));
const ExecutionDetailPage = lazy(() => import("./pages/ExecutionDetailPage"));
const NotFoundPage = lazy(() => import("./pages/NotFoundPage"));

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

function Layout({ children }: { children: ReactNode }) {
  const mainRef = useRef<HTMLElement>(null);
  const location = useLocation();
  const firstRender = useRef(true);

  // After client-side navigation, move focus to the new page's content so
  // keyboard and screen-reader users start there, as on a full page load.
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    mainRef.current?.focus();
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
                <NavLink to="/workflows">Workflows</NavLink>
              </li>
              <li>
                <NavLink to="/executions">Executions</NavLink>
              </li>
              <li>
                <a href="/api/docs">API docs</a>
              </li>
            </ul>
          </nav>
        </div>
      </header>
      <main id="main" ref={mainRef} tabIndex={-1} className="content">
        {children}
      </main>
    </>
  );
}

export function AppRoutes() {
  return (
    <Layout>
      <Suspense fallback={<Loading label="Loading page…" />}>
        <Routes>
          <Route path="/" element={<Navigate to="/workflows" replace />} />
          <Route path="/workflows" element={<WorkflowsPage />} />
          <Route path="/executions" element={<ExecutionsPage />} />
          <Route path="/executions/:id" element={<ExecutionDetailPage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Routes>
      </Suspense>
    </Layout>
  );
}

export default function App({ queryClient }: { queryClient?: QueryClient }) {
  const [client] = useState(() => queryClient ?? createQueryClient());
  return (
    <QueryClientProvider client={client}>
      <BrowserRouter>
        <AppRoutes />
      </BrowserRouter>
    </QueryClientProvider>
  );
}
