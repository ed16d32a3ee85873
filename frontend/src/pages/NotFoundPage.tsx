import { Link } from "react-router-dom";
import { useDocumentTitle } from "../hooks";

export default function NotFoundPage() {
  useDocumentTitle("Page not found");
  return (
    <section aria-labelledby="not-found-heading">
      <h1 id="not-found-heading">Page not found</h1>
      <p>
        There is nothing at this address. Go to <Link to="/workflows">Workflows</Link> or{" "}
        <Link to="/executions">Executions</Link>.
      </p>
    </section>
  );
}
