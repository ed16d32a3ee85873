import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { Page, Workflow } from "../api/types";
import { AuthContext, type AuthContextValue } from "../auth/context";
import { errorResponse, jsonResponse, renderPage, stubFetch } from "../test/utils";
import WorkflowsPage from "./WorkflowsPage";

const workflows: Page<Workflow> = {
  items: [
    {
      id: "onboarding",
      version: 3,
      latest_version: 3,
      name: "Customer onboarding",
      description: "Welcome a new customer",
      level: "COACHING",
      auto_ready: false,
      mode: "coaching",
      steps: [{ id: "a", tool: "echo" }, { id: "b", tool: "echo" }, { id: "c", tool: "echo" }],
      variables: {
        who: { type: "string", default: "world" },
        n: { type: "integer", required: true },
        vip: { type: "boolean", default: false },
      },
    },
    {
      id: "refund",
      version: 1,
      latest_version: 1,
      name: "Refund request",
      level: "OBSERVATION",
      auto_ready: false,
      mode: "auto",
      steps: [{ id: "only", tool: "echo" }],
    },
  ],
  total: 2,
  page: 1,
  per_page: 20,
};

function renderWorkflows(role = "admin") {
  const auth = { status: "authenticated", role } as AuthContextValue;
  return renderPage(
    <AuthContext.Provider value={auth}>
      <WorkflowsPage />
    </AuthContext.Provider>,
    { route: "/workflows", path: "/workflows" },
  );
}

describe("WorkflowsPage", () => {
  it("shows a loading state, then one row per workflow", async () => {
    stubFetch(() => jsonResponse(workflows));
    renderWorkflows();

    expect(screen.getByRole("status")).toHaveTextContent("Loading workflows…");

    const row = (await screen.findByRole("rowheader", { name: /Customer onboarding/ })).closest("tr")!;
    const cells = within(row).getAllByRole("cell").map((c) => c.textContent);
    expect(cells).toEqual(["v3", "Coaching", "Coaching", "3", "Run"]);
    expect(within(row).getByText("Welcome a new customer")).toBeInTheDocument();

    const second = screen.getByRole("rowheader", { name: "Refund request" }).closest("tr")!;
    expect(within(second).getAllByRole("cell").map((c) => c.textContent)).toEqual([
      "v1",
      "Observation",
      "AUTO",
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

  it("starts a run from a dialog, in the workflow's mode, with its typed variables", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(({ method }) =>
      method === "POST" ? jsonResponse({ execution_id: "ex 42", status: "pending" }, 201) : jsonResponse(workflows),
    );
    renderWorkflows();

    const run = await screen.findByRole("button", { name: "Run Customer onboarding" });
    run.focus();
    await user.keyboard("{Enter}");

    const dialog = await screen.findByRole("dialog", { name: "Run “Customer onboarding”" });
    const mode = within(dialog).getByLabelText("Mode");
    expect(mode).toHaveFocus();
    expect(mode).toHaveValue("coaching");
    expect(within(dialog).getByLabelText("who")).toHaveValue("world");
    expect(calls.filter((c) => c.method === "POST")).toHaveLength(0);

    await user.type(within(dialog).getByLabelText(/^n/), "4");
    await user.click(within(dialog).getByLabelText("vip"));
    await user.click(within(dialog).getByRole("button", { name: "Start run" }));

    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/executions/ex%2042"));
    const post = calls.find((c) => c.method === "POST");
    expect(post?.url).toBe("/api/executions/");
    expect(post?.body).toEqual({
      workflow_id: "onboarding",
      variables: { who: "world", n: 4, vip: true },
      mode: "coaching",
    });
  });

  it("offers a normal run to leads only, and auto only to a promoted workflow", async () => {
    const user = userEvent.setup();
    stubFetch(() => jsonResponse(workflows));
    const { unmount } = renderWorkflows("operator");
    await user.click(await screen.findByRole("button", { name: "Run Customer onboarding" }));
    let options = within(screen.getByRole("dialog")).getAllByRole("option").map((o) => o.getAttribute("value"));
    expect(options).toEqual(["coaching"]);
    unmount();

    renderWorkflows("lead");
    await user.click(await screen.findByRole("button", { name: "Run Refund request" }));
    const mode = within(screen.getByRole("dialog")).getByLabelText("Mode");
    expect(mode).toHaveValue("auto");
    options = within(screen.getByRole("dialog")).getAllByRole("option").map((o) => o.getAttribute("value"));
    expect(options).toEqual(["auto", "coaching", "normal"]);
  });

  it("says which variable is missing before asking the server, and shows the server's 422 on its field", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(({ method }) =>
      method === "POST"
        ? errorResponse(422, "validation_failed", "bad variables", { "variables.who": ["must not be empty"] })
        : jsonResponse(workflows),
    );
    renderWorkflows();
    await user.click(await screen.findByRole("button", { name: "Run Customer onboarding" }));
    const dialog = screen.getByRole("dialog");

    await user.click(within(dialog).getByRole("button", { name: "Start run" }));
    expect(within(dialog).getByRole("alert")).toHaveTextContent("is required");
    expect(within(dialog).getByLabelText(/^n/)).toHaveAttribute("aria-invalid", "true");
    expect(calls.filter((c) => c.method === "POST")).toHaveLength(0);

    await user.type(within(dialog).getByLabelText(/^n/), "2");
    await user.click(within(dialog).getByRole("button", { name: "Start run" }));
    await waitFor(() => expect(within(dialog).getByLabelText("who")).toHaveAttribute("aria-invalid", "true"));
    expect(within(dialog).getByRole("alert")).toHaveTextContent("must not be empty");
    expect(screen.getByTestId("location")).toHaveTextContent("/workflows");
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
    await user.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Start run" }));

    const alert = await within(screen.getByRole("dialog")).findByRole("alert");
    expect(alert).toHaveTextContent("This workflow is disabled");
    expect(screen.getByTestId("location")).toHaveTextContent("/workflows");
    expect(within(screen.getByRole("dialog")).getByRole("button", { name: "Start run" })).toBeEnabled();
  });
});
