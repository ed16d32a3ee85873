import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import App, { createQueryClient } from "./App";
import { startPageLoad } from "./preload";
import "./styles.css";

const root = document.getElementById("root");
if (!root) throw new Error("Missing #root element in index.html");

const queryClient = createQueryClient();
// the session check, the page's chunk and its first reads, all at once, before the first render
startPageLoad(queryClient, window.location);

createRoot(root).render(
  <StrictMode>
    <App queryClient={queryClient} />
  </StrictMode>,
);
