import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { jsonResponse, renderPage, stubFetch } from "../test/utils";
import { NotificationRoutes } from "./NotificationRoutes";

const route = {
  id: "r-1",
  name: "payments",
  events: ["approval_requested"],
  workflow_id: null,
  tool: "payments.*",
  users: [],
  endpoint_id: null,
  escalate_after_s: null,
  escalate_users: [],
  escalate_endpoint_id: null,
  slack_channel: "#payments",
  enabled: true,
  created_at: "2026-01-01T00:00:00Z",
};

describe("NotificationRoutes", () => {
  it("sends a route's Slack channel and lists it", async () => {
    const { calls } = stubFetch((call) => {
      if (call.url === "/api/notifications/routes" && call.method === "POST") return jsonResponse({ ...route, id: "r-2" }, 201);
      if (call.url === "/api/notifications/routes") return jsonResponse({ items: [route] });
      return jsonResponse({ items: [] });
    });
    renderPage(<NotificationRoutes />, { route: "/settings", path: "/settings" });
    const listed = await screen.findByRole("list", { name: "Routes" });
    expect(within(listed).getByText(/Slack #payments/)).toBeInTheDocument();

    const user = userEvent.setup();
    const form = screen.getByRole("form", { name: "Add a route" });
    await user.type(within(form).getByLabelText("Route name"), "ops");
    await user.type(within(form).getByLabelText("Slack channel (optional)"), "C0123ABCD");
    await user.click(within(form).getByRole("button", { name: "Add route" }));
    await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
    const post = calls.find((c) => c.method === "POST");
    expect(post?.body).toMatchObject({ name: "ops", slack_channel: "C0123ABCD", users: [] });
  });

  it("refuses a Slack channel that is neither an id nor a #name before sending, and shows the server's word", async () => {
    const { calls } = stubFetch((call) => {
      if (call.method === "POST")
        return jsonResponse(
          {
            error: {
              code: "validation_failed",
              message: "the request is not valid",
              details: { slack_channel: ["must be a Slack channel id (C0123ABCD) or a #channel-name"] },
            },
          },
          422,
        );
      return jsonResponse({ items: [] });
    });
    renderPage(<NotificationRoutes />, { route: "/settings", path: "/settings" });
    const user = userEvent.setup();
    const form = await screen.findByRole("form", { name: "Add a route" });
    const channel = within(form).getByLabelText("Slack channel (optional)");
    await user.type(channel, "general");
    expect(channel).toHaveAttribute("aria-invalid", "true");
    expect(within(form).getByRole("alert")).toHaveTextContent("channel id (C0123ABCD) or a #channel-name");
    await user.click(within(form).getByRole("button", { name: "Add route" }));
    expect(calls.some((c) => c.method === "POST")).toBe(false);

    // one the page lets through but the server refuses: its message is shown at the field
    await user.clear(channel);
    await user.type(channel, "#ops");
    expect(channel).not.toHaveAttribute("aria-invalid");
    await user.click(within(form).getByRole("button", { name: "Add route" }));
    await waitFor(() => expect(channel).toHaveAttribute("aria-invalid", "true"));
    expect(within(form).getAllByRole("alert")[0]).toHaveTextContent("must be a Slack channel id");
  });
});
