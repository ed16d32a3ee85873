import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import App from "./App";
import { jsonResponse, stubFetch, testQueryClient } from "./test/utils";

describe("App", () => {
  it("shows the Coach header and navigation, and opens Workflows by default", async () => {
    window.history.replaceState(null, "", "/");
    stubFetch(() => jsonResponse({ items: [], total: 0, page: 1, per_page: 20 }));
    render(<App queryClient={testQueryClient()} />);

    expect(screen.getByRole("link", { name: "Coach" })).toBeInTheDocument();
    const nav = screen.getByRole("navigation", { name: "Main" });
    expect(within(nav).getByRole("link", { name: "Workflows" })).toHaveAttribute("href", "/workflows");
    expect(within(nav).getByRole("link", { name: "Executions" })).toHaveAttribute("href", "/executions");
    expect(within(nav).getByRole("link", { name: "API docs" })).toHaveAttribute("href", "/api/docs");

    // The page itself is a lazily loaded chunk.
    expect(await screen.findByRole("heading", { level: 1, name: "Workflows" })).toBeInTheDocument();
    expect(within(nav).getByRole("link", { name: "Workflows" })).toHaveAttribute("aria-current", "page");
    expect(window.location.pathname).toBe("/workflows");
  });
});
