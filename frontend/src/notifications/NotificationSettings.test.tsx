import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { jsonResponse, renderPage, stubFetch } from "../test/utils";
import { NotificationSettings } from "./NotificationSettings";
import { WorkspaceNotifications } from "./WorkspaceNotifications";

const saved = {
  email: true,
  kinds: { approval_requested: true, review_held: true, suggestion_waiting: false, run_failed: true },
  quiet_start: null,
  quiet_end: null,
  timezone: "UTC",
};

describe("NotificationSettings", () => {
  it("says beside Email me when the server sends no email, and never sends that back", async () => {
    const { calls } = stubFetch((call) => jsonResponse(call.method === "PUT" ? call.body : { ...saved, email_available: false }));
    renderPage(<NotificationSettings />, { route: "/settings", path: "/settings" });
    expect(await screen.findByText(/this server sends no email/)).toHaveTextContent("has not set up SMTP");
    await userEvent.setup().click(screen.getByRole("button", { name: "Save notification settings" }));
    await waitFor(() => expect(calls.some((c) => c.method === "PUT")).toBe(true));
    expect(Object.keys(calls.find((c) => c.method === "PUT")?.body as object)).not.toContain("email_available");
  });

  it("says nothing of email when the server can send it", async () => {
    stubFetch(() => jsonResponse({ ...saved, email_available: true }));
    renderPage(<NotificationSettings />, { route: "/settings", path: "/settings" });
    await screen.findByRole("group", { name: "Email me when" });
    expect(screen.queryByText(/this server sends no email/)).not.toBeInTheDocument();
  });

  it("sends the person's choices and quiet hours", async () => {
    const { calls } = stubFetch((call) => {
      if (call.method === "PUT") return jsonResponse(call.body);
      return jsonResponse(saved);
    });
    renderPage(<NotificationSettings />, { route: "/settings", path: "/settings" });
    const user = userEvent.setup();
    const email = within(await screen.findByRole("group", { name: "Email me when" }));
    await user.click(email.getByLabelText("A suggestion waits in coaching"));
    await user.click(email.getByLabelText("A run failed"));
    await user.click(within(screen.getByRole("group", { name: "Push when" })).getByLabelText("A run failed"));
    await user.click(screen.getByLabelText(/Quiet hours/));
    await user.clear(screen.getByLabelText("Time zone"));
    await user.type(screen.getByLabelText("Time zone"), "Europe/Berlin");
    await user.click(screen.getByRole("button", { name: "Save notification settings" }));
    expect(await screen.findByRole("status")).toHaveTextContent("Notification settings saved.");
    const put = calls.find((c) => c.method === "PUT");
    expect(put?.url).toBe("/api/notifications/settings");
    expect(put?.body).toMatchObject({
      email: true,
      kinds: { suggestion_waiting: true, run_failed: false },
      push: true,
      push_kinds: { suggestion_waiting: false, run_failed: false },
      quiet_start: "22:00",
      quiet_end: "07:00",
      timezone: "Europe/Berlin",
    });
  });
});

describe("WorkspaceNotifications", () => {
  it("shows a failing endpoint as failing and the new secret once", async () => {
    const endpoint = {
      id: "e-1",
      name: "ops",
      url: "https://hooks.example.com/coach",
      events: ["approval_requested"],
      enabled: true,
      failing: true,
      consecutive_failures: 2,
      last_status: 500,
      last_error: "the endpoint answered 500",
      last_delivery_at: "2026-01-02T00:00:00Z",
      created_at: "2026-01-01T00:00:00Z",
      deliveries: [],
    };
    const { calls } = stubFetch((call) => {
      if (call.url === "/api/notifications/webhooks" && call.method === "POST")
        return jsonResponse({ ...endpoint, id: "e-2", failing: false, secret: "s3cret" }, 201);
      if (call.url === "/api/notifications/webhooks") return jsonResponse({ items: [endpoint] });
      return jsonResponse({ items: [] });
    });
    renderPage(<WorkspaceNotifications />, { route: "/settings", path: "/settings" });
    const list = await screen.findByRole("list", { name: "Webhook endpoints" });
    expect(within(list).getByText(/failing \(2 in a row, last answer 500\)/)).toBeInTheDocument();
    const user = userEvent.setup();
    const form = screen.getByRole("form", { name: "Add a webhook endpoint" });
    await user.type(within(form).getByLabelText("URL"), "https://hooks.example.com/other");
    await user.click(within(form).getByRole("button", { name: "Add endpoint" }));
    expect(await screen.findByLabelText("Signing secret")).toHaveValue("s3cret");
    await waitFor(() =>
      expect(calls.some((c) => c.method === "POST" && (c.body as { url: string }).url.endsWith("/other"))).toBe(true),
    );
  });
});
