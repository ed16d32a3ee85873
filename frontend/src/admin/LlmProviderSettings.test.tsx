import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter } from "react-router-dom";
import { describe, expect, it } from "vitest";
import { ApiError } from "../api/client";
import type { Workflow } from "../api/types";
import { StartDialog } from "../pages/StartDialog";
import { AsRole, errorResponse, jsonResponse, renderPage, stubFetch } from "../test/utils";
import SettingsPage from "./SettingsPage";

const NONE = {
  base_url: null,
  model: null,
  api_key_set: false,
  updated_by: null,
  updated_at: null,
  in_use: "none",
  server_default: { configured: false, model: null },
};

function openSettings(role: string, handler: Parameters<typeof stubFetch>[0]) {
  const stub = stubFetch((call) => {
    if (call.url === "/api/auth/tokens") return jsonResponse({ items: [] });
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

describe("Settings → LLM provider", () => {
  it("saves the provider, never shows the key again, and shows the answer of a test", async () => {
    let saved: Record<string, unknown> = NONE;
    const { calls, user } = openSettings("admin", (call) => {
      if (call.url === "/api/workspace/llm" && call.method === "GET") return jsonResponse(saved);
      if (call.url === "/api/workspace/llm" && call.method === "PUT") {
        const body = call.body as { base_url: string; model: string; api_key?: string };
        saved = { ...NONE, base_url: body.base_url, model: body.model, api_key_set: Boolean(body.api_key), in_use: "workspace",
                  updated_by: "admin@test.local", updated_at: "2026-11-27T22:00:00Z" };
        return jsonResponse(saved);
      }
      if (call.url === "/api/workspace/llm/test")
        return jsonResponse({ ok: true, answer: "Hello from the model.", source: "workspace", model: "gpt-4o-mini" });
      return jsonResponse({});
    });
    const form = await screen.findByRole("form", { name: "LLM provider" });
    expect(screen.getByText(/No provider is set/)).toBeInTheDocument();
    expect(within(form).getByRole("button", { name: "Test" })).toBeDisabled();

    await user.type(within(form).getByLabelText("Base URL"), "https://llm.example.com/v1");
    await user.type(within(form).getByLabelText("Model"), "gpt-4o-mini");
    await user.type(within(form).getByLabelText("API key"), "sk-secret");
    expect(within(form).getByLabelText("API key")).toHaveAttribute("type", "password");
    await user.click(within(form).getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(calls.find((c) => c.method === "PUT")?.body).toEqual({
        base_url: "https://llm.example.com/v1",
        model: "gpt-4o-mini",
        api_key: "sk-secret",
      }),
    );
    const again = await screen.findByRole("form", { name: "LLM provider" });
    expect(await screen.findByText(/Agent steps use this workspace's provider/)).toBeInTheDocument();
    expect(within(again).getByLabelText("API key")).toHaveValue("");
    expect(within(again).getByLabelText("API key")).toHaveAttribute("placeholder", "A key is stored: leave empty to keep it");
    expect(within(again).getByLabelText("Base URL")).toHaveValue("https://llm.example.com/v1");

    await user.click(within(again).getByRole("button", { name: "Test" }));
    expect(await screen.findByText("Hello from the model.")).toBeInTheDocument();
    expect(screen.getByText(/The provider answered \(gpt-4o-mini\)/)).toBeInTheDocument();
  });

  it("puts the server's 422 on the field, checks the URL itself, and shows a failed test in words", async () => {
    const saved = { ...NONE, base_url: "http://10.0.0.5/v1", model: "m", in_use: "workspace" };
    const { calls, user } = openSettings("admin", (call) => {
      if (call.url === "/api/workspace/llm" && call.method === "GET") return jsonResponse(saved);
      if (call.url === "/api/workspace/llm" && call.method === "PUT")
        return errorResponse(422, "validation_failed", "the LLM provider's base URL is refused", {
          base_url: ["outbound request to 10.0.0.5 refused: a private address"],
        });
      if (call.url === "/api/workspace/llm/test")
        return jsonResponse({ ok: false, failure: "the LLM server at http://10.0.0.5/v1 answered 401: bad key", source: "workspace", model: "m" });
      return jsonResponse({});
    });
    const form = await screen.findByRole("form", { name: "LLM provider" });
    await user.click(within(form).getByRole("button", { name: "Test" }));
    expect(await screen.findByText(/answered 401: bad key/)).toBeInTheDocument();
    expect(screen.getByText("The test failed")).toBeInTheDocument();

    const url = within(form).getByLabelText("Base URL");
    await user.clear(url);
    await user.type(url, "not a url");
    expect(within(form).getByRole("button", { name: "Test" })).toBeDisabled(); // unsaved changes: save first
    await user.click(within(form).getByRole("button", { name: "Save" }));
    expect(await within(form).findByText("must be an http:// or https:// address")).toBeInTheDocument();
    expect(calls.some((c) => c.method === "PUT")).toBe(false);

    await user.clear(url);
    await user.type(url, "http://10.0.0.6/v1");
    await user.click(within(form).getByRole("button", { name: "Save" }));
    expect(await within(form).findByText(/a private address/)).toBeInTheDocument();
    expect(url).toHaveAttribute("aria-invalid", "true");
  });

  it("is not shown to a lead, who asks nothing about it", async () => {
    const { calls } = openSettings("lead", () => jsonResponse(NONE));
    expect(await screen.findByRole("heading", { name: "API tokens" })).toBeInTheDocument();
    expect(screen.queryByRole("heading", { name: "LLM provider" })).not.toBeInTheDocument();
    expect(calls.some((c) => c.url.startsWith("/api/workspace/llm"))).toBe(false);
  });
});

describe("Starting an agent workflow without a provider", () => {
  const workflow: Workflow = {
    id: "wf", name: "Invoice summary (agent)", version: 1, latest_version: 1, level: "OBSERVATION", auto_ready: false,
    mode: "coaching", steps: [], variables: {},
  };
  const refused = new ApiError(409, "llm_provider_missing",
    "this workflow has an agent step (summarise) and no LLM provider is configured: set an LLM provider in Settings → LLM provider");

  it("tells an admin what to do, with a link to the setting", () => {
    render(
      <MemoryRouter>
        <StartDialog workflow={workflow} role="admin" busy={false} error={refused} onStart={() => {}} onCancel={() => {}} />
      </MemoryRouter>,
    );
    const alert = screen.getByRole("alert");
    expect(alert).toHaveTextContent("set an LLM provider in Settings → LLM provider");
    expect(within(alert).getByRole("link", { name: "Open Settings → LLM provider" })).toHaveAttribute("href", "/settings#llm-provider");
  });

  it("tells an operator to ask an admin", () => {
    render(
      <MemoryRouter>
        <StartDialog workflow={workflow} role="operator" busy={false} error={refused} onStart={() => {}} onCancel={() => {}} />
      </MemoryRouter>,
    );
    expect(screen.getByRole("alert")).toHaveTextContent("Ask an admin of this workspace");
    expect(screen.queryByRole("link")).not.toBeInTheDocument();
  });
});
