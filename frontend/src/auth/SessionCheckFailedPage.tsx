import { ErrorNotice } from "../components/QueryState";
import { useDocumentTitle } from "../hooks";
import { useAuth } from "./useAuth";

/** Shown when the session check failed for another reason than "not logged in". */
export default function SessionCheckFailedPage() {
  useDocumentTitle("Cannot reach Coach");
  const { error, recheck } = useAuth();
  return (
    <>
      <header className="site-header">
        <div className="site-header__inner">
          <span className="brand">Coach</span>
        </div>
      </header>
      <main id="main" className="content content--narrow">
        <h1>Cannot reach Coach</h1>
        <ErrorNotice title="Could not check whether you are logged in" error={error} onRetry={recheck} />
      </main>
    </>
  );
}
