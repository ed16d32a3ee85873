import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it } from "vitest";
import { setShortcutMode, shortcutMode } from "../coaching/shortcutPreference";
import { AsRole, errorResponse, jsonResponse, renderPage, stubFetch } from "../test/utils";
import AdminPage from "./AdminPage";
import SettingsPage from "./SettingsPage";

const members = [
  { id: "u-1", email: "ada@example.com", name: "Ada", role: "admin", disabled: false },
  { id: "u-2", email: "bob@example.com", name: "", role: "operator", disabled: false },
];

function openAdmin(role = "admin") {
  const { calls } = stubFetch((call) => {
    if (call.url === "/api/users" && call.method === "GET") return jsonResponse({ items: members });
    if (call.url === "/api/users/invitations") return jsonResponse({ items: [] });
    if (call.url === "/api/users" && call.method === "POST") {
      const body = call.body as { email: string };
      if (!body.email) return errorResponse(422, "validation_failed", "invalid", { email: ["not an email"] });
      return jsonResponse({ status: "invited", email: body.email, role: "lead" }, 202);
    }
    if (call.url === "/api/users/u-1/role") return errorResponse(409, "conflict", "the workspace needs an admin");
    if (call.url.startsWith("/api/users/u-2")) return jsonResponse({ ...members[1], role: "lead" });
    return jsonResponse({});
  });
  renderPage(
    <AsRole role={role}>
      <AdminPage />
    </AsRole>,
    { route: "/admin", path: "/admin" },
  );
  return { calls, user: userEvent.setup() };
}

afterEach(() => setShortcutMode("single"));

describe("AdminPage", () => {
  it("changes a role, shows the server's refusal, and invites with the 422 on the field", async () => {
    const { calls, user } = openAdmin();
    const bob = await screen.findByRole("row", { name: /bob@example.com/ });
    await user.selectOptions(within(bob).getByLabelText("Role of bob@example.com"), "lead");
    await waitFor(() => expect(calls.find((c) => c.url === "/api/users/u-2/role")?.body).toEqual({ role: "lead" }));
    expect(await screen.findByText("bob@example.com is now lead.")).toBeInTheDocument();

    const ada = screen.getByRole("row", { name: /ada@example.com/ });
    await user.selectOptions(within(ada).getByLabelText("Role of ada@example.com"), "operator");
    expect(await screen.findByText(/Not done: the workspace needs an admin/)).toBeInTheDocument();

    const form = screen.getByRole("form", { name: "Invite someone" });
    await user.click(within(form).getByRole("button", { name: "Send invitation" }));
    expect(await within(form).findByText("not an email")).toBeInTheDocument();
    expect(within(form).getByLabelText("Email")).toHaveAttribute("aria-invalid", "true");
    await user.type(within(form).getByLabelText("Email"), "cy@example.com");
    await user.selectOptions(within(form).getByLabelText("Role"), "lead");
    await user.click(within(form).getByRole("button", { name: "Send invitation" }));
    expect(await screen.findByText(/Invited cy@example.com as lead/)).toBeInTheDocument();
  });

  it("removes a member only after a confirmation that starts on Cancel", async () => {
    const { calls, user } = openAdmin();
    await user.click(await screen.findByRole("button", { name: "Remove bob@example.com" }));
    const dialog = screen.getByRole("dialog", { name: "Remove bob@example.com?" });
    expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus();
    await user.click(within(dialog).getByRole("button", { name: "Remove member" }));
    await waitFor(() => expect(calls.some((c) => c.method === "DELETE" && c.url === "/api/users/u-2")).toBe(true));
  });

  it("disables a member only after a confirmation: Cancel sends nothing", async () => {
    const { calls, user } = openAdmin();
    await user.click(await screen.findByRole("button", { name: "Disable bob@example.com" }));
    let dialog = screen.getByRole("dialog", { name: "Disable bob@example.com?" });
    expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus();
    await user.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(calls.some((c) => c.url === "/api/users/u-2/disable")).toBe(false);
    await user.click(screen.getByRole("button", { name: "Disable bob@example.com" }));
    dialog = screen.getByRole("dialog", { name: "Disable bob@example.com?" });
    await user.click(within(dialog).getByRole("button", { name: "Disable member" }));
    await waitFor(() => expect(calls.some((c) => c.method === "POST" && c.url === "/api/users/u-2/disable")).toBe(true));
  });

  it("tells a non-admin the page is not theirs, and asks nothing", async () => {
    const { calls } = openAdmin("lead");
    expect(await screen.findByText(/Only a workspace's admins manage its members/)).toBeInTheDocument();
    expect(calls).toHaveLength(0);
  });
});

describe("SettingsPage", () => {
  it("shows a new token once and revokes one after a confirmation", async () => {
    let tokens = [{ id: "t-1", name: "old", created_at: "2026-01-01T00:00:00Z", last_used_at: null, revoked_at: null }];
    const { calls } = stubFetch((call) => {
      if (call.url === "/api/auth/tokens" && call.method === "POST") {
        const made = { id: "t-2", name: "nightly", created_at: "2026-01-02T00:00:00Z", last_used_at: null, revoked_at: null };
        tokens = [...tokens, made];
        return jsonResponse({ ...made, token: "coach_secret" }, 201);
      }
      if (call.url === "/api/auth/tokens") return jsonResponse({ items: tokens });
      if (call.method === "DELETE") {
        tokens = tokens.filter((t) => !call.url.endsWith(t.id));
        return new Response(null, { status: 204 });
      }
      return jsonResponse({});
    });
    renderPage(<SettingsPage />, { route: "/settings", path: "/settings" });
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText("Token name"), "nightly");
    await user.click(screen.getByRole("button", { name: "Create token" }));
    expect(await screen.findByLabelText("The new token")).toHaveValue("coach_secret");
    expect(await screen.findByRole("row", { name: /nightly/ })).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Done, hide it" }));
    expect(screen.queryByLabelText("The new token")).not.toBeInTheDocument();

    await user.click(screen.getByRole("button", { name: "Revoke token old" }));
    await user.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Revoke token" }));
    await waitFor(() => expect(calls.some((c) => c.method === "DELETE" && c.url === "/api/auth/tokens/t-1")).toBe(true));
    await waitFor(() => expect(screen.queryByRole("row", { name: /old/ })).not.toBeInTheDocument());
  });

  it("keeps the keyboard choice in localStorage", async () => {
    stubFetch(() => jsonResponse({ items: [] }));
    renderPage(<SettingsPage />, { route: "/settings", path: "/settings" });
    const user = userEvent.setup();
    expect(screen.getByLabelText(/Single keys/)).toBeChecked();
    await user.click(screen.getByLabelText(/With Alt/));
    expect(shortcutMode()).toBe("alt");
    expect(localStorage.getItem("coach.shortcuts")).toBe("alt");
    expect(screen.getByRole("status")).toHaveTextContent("Shortcuts: With Alt.");
  });
});
