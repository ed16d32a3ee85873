import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import SettingsPage from "../admin/SettingsPage";
import { AsRole, jsonResponse, renderPage, stubFetch } from "../test/utils";

const NONE = {
  bot_token_set: false,
  signing_secret_set: false,
  default_channel: null,
  interactivity_path: "/api/integrations/slack/w1/interactions",
  updated_by: null,
  updated_at: null,
};

function openSettings(role: string, handler: Parameters<typeof stubFetch>[0]) {
  const stub = stubFetch((call) => {
    if (call.url === "/api/auth/tokens") return jsonResponse({ items: [] });
    if (call.url === "/api/workspace/llm") return jsonResponse({ in_use: "none", server_default: { configured: false } });
    return handler(call);
  });
  renderPage(
    <AsRole role={role}>
      <SettingsPage />
    </AsRole>,
    { route: "/settings", path: "/settings" },
  );
  return { ...stub, user: userEvent.setup() };
}

describe("Settings → Slack", () => {
  it("lets an admin save the app without ever showing the secrets again", async () => {
    let saved: Record<string, unknown> = NONE;
    const { calls, user } = openSettings("admin", (call) => {
      if (call.url === "/api/workspace/slack/me") return jsonResponse({ slack_user_id: null });
      if (call.url === "/api/workspace/slack" && call.method === "PUT") {
        const body = call.body as { default_channel: string; bot_token?: string; signing_secret?: string };
        saved = { ...NONE, bot_token_set: Boolean(body.bot_token), signing_secret_set: Boolean(body.signing_secret),
                  default_channel: body.default_channel, updated_by: "admin@test.local", updated_at: "2026-11-28T00:00:00Z" };
        return jsonResponse(saved);
      }
      if (call.url === "/api/workspace/slack") return jsonResponse(saved);
      return jsonResponse({});
    });
    const form = await screen.findByRole("form", { name: "Slack app" });
    expect(screen.getByText(/Slack is not set up yet/)).toBeInTheDocument();
    expect(form).toHaveTextContent("/api/integrations/slack/w1/interactions");
    await user.type(within(form).getByLabelText("Bot token"), "xoxb-secret");
    await user.type(within(form).getByLabelText("Signing secret"), "signing-secret");
    await user.type(within(form).getByLabelText("Default channel ID"), "C0REVIEWS");
    await user.click(within(form).getByRole("button", { name: "Save Slack settings" }));
    await waitFor(() =>
      expect(calls.find((c) => c.method === "PUT")?.body).toEqual({
        bot_token: "xoxb-secret",
        signing_secret: "signing-secret",
        default_channel: "C0REVIEWS",
      }),
    );
    expect(await screen.findByText(/Slack is set up\./)).toBeInTheDocument();
    expect(within(form).getByLabelText("Bot token")).toHaveValue("");
    expect(within(form).getByLabelText("Bot token")).toHaveAttribute("placeholder", "A token is stored: leave empty to keep it");
  });

  it("shows an operator only their own Slack member ID", async () => {
    const { calls, user } = openSettings("operator", (call) => {
      if (call.url === "/api/workspace/slack/me" && call.method === "PUT") return jsonResponse(call.body as object);
      if (call.url === "/api/workspace/slack/me") return jsonResponse({ slack_user_id: null });
      return jsonResponse({});
    });
    const mine = await screen.findByRole("form", { name: "Your Slack member ID" });
    expect(screen.queryByRole("form", { name: "Slack app" })).toBeNull();
    await user.type(within(mine).getByLabelText("Slack member ID"), "U0OPER");
    await user.click(within(mine).getByRole("button", { name: "Save Slack ID" }));
    expect(await within(mine).findByText("Saved: U0OPER.")).toBeInTheDocument();
    expect(calls.some((c) => c.url === "/api/workspace/slack")).toBe(false);
  });
});

describe("Settings → Slack failures", () => {
  const SET = { ...NONE, bot_token_set: true, signing_secret_set: true, updated_by: "admin@test.local",
    updated_at: "2026-11-28T00:00:00Z", interactivity_url: "http://127.0.0.1:5000/api/integrations/slack/w1/interactions",
    interactivity_unreachable: "127.0.0.1 is this machine's loopback address",
    last_delivery: { status: "pending", error: "Slack: invalid_auth", attempts: 2, at: "2026-11-28T00:05:00Z" } };

  it("shows the last delivery's error, the unreachable interactivity URL, and Slack's answer to Test", async () => {
    const { calls, user } = openSettings("admin", (call) => {
      if (call.url === "/api/workspace/slack/me") return jsonResponse({ slack_user_id: null });
      if (call.url === "/api/workspace/slack/test")
        return jsonResponse({ ok: false, code: "invalid_auth", failure: "the bot token is not valid: copy it again" });
      return jsonResponse(SET);
    });
    expect(await screen.findByText(/The last review message failed after 2 attempts/)).toHaveTextContent(
      "Slack: invalid_auth. It is tried again.",
    );
    expect(screen.getByText(/Slack cannot reach this address/)).toHaveTextContent("loopback");
    await user.click(screen.getByRole("button", { name: "Test the Slack app" }));
    expect(await screen.findByText(/Slack refused/)).toHaveTextContent("the bot token is not valid: copy it again");
    expect(calls.filter((c) => c.url === "/api/workspace/slack/test" && c.method === "POST")).toHaveLength(1);
  });
});
