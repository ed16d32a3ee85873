import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { Page, Workflow } from "../api/types";
import { errorResponse, jsonResponse, renderPage, stubFetch } from "../test/utils";
import WorkflowsPage from "./WorkflowsPage";

const workflows: Page<Workflow> = {
  items: [
    {
      id: "onboarding",
      version: 3,
      name: "Customer onboarding",
      description: "Welcome a new customer",
      level: 2,
      mode: "guided",
      steps: [{ id: "a" }, { id: "b" }, { id: "c" }],
    },
    {
      id: "refund",
      version: 1,
      name: "Refund request",
      level: 1,
      mode: "normal",
      steps: [{ id: "only" }],
    },
  ],
  total: 2,
  page: 1,
  per_page: 20,
};

function renderWorkflows() {
  return renderPage(<WorkflowsPage />, { route: "/workflows", path: "/workflows" });
}

describe("WorkflowsPage", () => {
  it("shows a loading state, then one row per workflow", async () => {
    stubFetch(() => jsonResponse(workflows));
    renderWorkflows();

    expect(screen.getByRole("status")).toHaveTextContent("Loading workflows…");

    const row = (await screen.findByRole("rowheader", { name: /Customer onboarding/ })).closest("tr")!;
    const cells = within(row).getAllByRole("cell").map((c) => c.textContent);
    expect(cells).toEqual(["v3", "2", "guided", "3", "Run"]);
    expect(within(row).getByText("Welcome a new customer")).toBeInTheDocument();

    const second = screen.getByRole("rowheader", { name: "Refund request" }).closest("tr")!;
    expect(within(second).getAllByRole("cell").map((c) => c.textContent)).toEqual([
      "v1",
      "1",
      "normal",
      "1",
      "Run",
    ]);
    expect(screen.getAllByRole("button", { name: /^Run / })).toHaveLength(2);
    expect(screen.queryByRole("status")).not.toBeInTheDocument();
  });

  it("links each workflow's name to its definition page", async () => {
    const user = userEvent.setup();
    stubFetch(() => jsonResponse(workflows));
    renderWorkflows();

    const link = await screen.findByRole("link", { name: "Refund request" });
    expect(link).toHaveAttribute("href", "/workflows/refund");
    expect(screen.getByRole("link", { name: "Customer onboarding" })).toHaveAttribute("href", "/workflows/onboarding");
    await user.click(link);
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/workflows/refund"));
  });

  it("requests the workflow list from the API", async () => {
    const { calls } = stubFetch(() => jsonResponse(workflows));
    renderWorkflows();
    await screen.findByRole("rowheader", { name: /Customer onboarding/ });
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual(["GET /api/workflows"]);
  });

  it("says so when there are no workflows", async () => {
    stubFetch(() => jsonResponse({ items: [], total: 0, page: 1, per_page: 20 }));
    renderWorkflows();
    expect(await screen.findByText("No workflows yet.")).toBeInTheDocument();
    expect(screen.queryByRole("table")).not.toBeInTheDocument();
  });

  it("shows the server's error message when the list cannot load", async () => {
    stubFetch(() => errorResponse(503, "unavailable", "Workflow store is offline"));
    renderWorkflows();

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not load workflows");
    expect(alert).toHaveTextContent("Workflow store is offline");
    expect(within(alert).getByRole("button", { name: "Try again" })).toBeInTheDocument();
  });

  it("starts a run with the keyboard and opens the new execution", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(({ method }) =>
      method === "POST" ? jsonResponse({ execution_id: "ex 42", status: "pending" }, 201) : jsonResponse(workflows),
    );
    renderWorkflows();

    const run = await screen.findByRole("button", { name: "Run Customer onboarding" });
    run.focus();
    await user.keyboard("{Enter}");

    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/executions/ex%2042"));
    expect(screen.getByText("Other page")).toBeInTheDocument();
    const post = calls.find((c) => c.method === "POST");
    expect(post?.url).toBe("/api/executions/");
    expect(post?.body).toEqual({ workflow_id: "onboarding", variables: {}, mode: "normal" });
  });

  it("stays on the page and explains why when a run cannot start", async () => {
    const user = userEvent.setup();
    stubFetch(({ method }) =>
      method === "POST"
        ? errorResponse(409, "workflow_disabled", "This workflow is disabled")
        : jsonResponse(workflows),
    );
    renderWorkflows();

    await user.click(await screen.findByRole("button", { name: "Run Refund request" }));

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Could not start “Refund request”");
    expect(alert).toHaveTextContent("This workflow is disabled");
    expect(screen.getByTestId("location")).toHaveTextContent("/workflows");
    expect(screen.getByRole("button", { name: "Run Refund request" })).toBeEnabled();
  });
});
