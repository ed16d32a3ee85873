import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch } from "./test/auth";

describe("App", () => {
  it("shows the Coach header and navigation, and opens Workflows by default", async () => {
    stubSignedInFetch();
    renderApp("/");

    // The session check runs first; then the signed-in frame appears.
    expect(await screen.findByRole("link", { name: "Coach" })).toBeInTheDocument();
    const nav = screen.getByRole("navigation", { name: "Main" });
    expect(within(nav).getByRole("link", { name: "Workflows" })).toHaveAttribute("href", "/workflows");
    expect(within(nav).getByRole("link", { name: "Executions" })).toHaveAttribute("href", "/executions");
    expect(within(nav).getByRole("link", { name: "API docs" })).toHaveAttribute("href", "/api/docs");

    // The page itself is a lazily loaded chunk.
    expect(await screen.findByRole("heading", { level: 1, name: "Workflows" })).toBeInTheDocument();
    expect(within(nav).getByRole("link", { name: "Workflows" })).toHaveAttribute("aria-current", "page");
    expect(window.location.pathname).toBe("/workflows");
  });

  it("says it is checking the session before showing anything", async () => {
    stubSignedInFetch();
    renderApp("/");
    expect(screen.getByRole("status")).toHaveTextContent("Checking your session…");
    expect(await screen.findByRole("heading", { level: 1, name: "Workflows" })).toBeInTheDocument();
  });
});
