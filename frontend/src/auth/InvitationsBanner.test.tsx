import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderApp, stubSignedInFetch, emptyPage } from "../test/auth";
import { jsonResponse } from "../test/utils";

const invitation = {
  id: "inv-1",
  workspace: { id: "9", slug: "ops", name: "Ops" },
  role: "lead",
  invited_by: "boss@example.com",
  status: "pending",
  created_at: "2026-11-23T10:00:00Z",
};

describe("InvitationsBanner", () => {
  it("lists pending invitations and accepts one", async () => {
    const user = userEvent.setup();
    let pending = [invitation];
    const { calls } = stubSignedInFetch((call) => {
      if (call.url === "/api/auth/invitations") return jsonResponse({ items: pending });
      if (call.url === "/api/auth/invitations/inv-1/accept") {
        pending = [];
        return jsonResponse({ invitation: { ...invitation, status: "accepted" }, workspace: { ...invitation.workspace, role: "lead" } });
      }
      return jsonResponse(emptyPage);
    });
    renderApp("/workflows");

    const banner = await screen.findByRole("region", { name: "Invitations" });
    expect(within(banner).getByText(/Ops as lead/)).toBeInTheDocument();
    await user.click(within(banner).getByRole("button", { name: "Accept" }));
    await waitFor(() => expect(calls.some((c) => c.url === "/api/auth/invitations/inv-1/accept")).toBe(true));
    await waitFor(() => expect(screen.queryByRole("region", { name: "Invitations" })).not.toBeInTheDocument());
  });

  it("shows nothing without invitations", async () => {
    stubSignedInFetch();
    renderApp("/workflows");
    await screen.findByRole("heading", { level: 1, name: "Workflows" });
    expect(screen.queryByRole("region", { name: "Invitations" })).not.toBeInTheDocument();
  });
});
