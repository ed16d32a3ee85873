import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { renderLive } from "../dashboards/testFixtures";
import { errorResponse, jsonResponse, stubFetch, type RecordedCall } from "../test/utils";
import { AgentStepRegions, agentStepTools, globMatch } from "./AgentStepRegions";
import { REPLAY } from "./testFixtures";

const TOOLS = ["file.read", "file.write", "sql.query", "sql.exec", "echo"].map((name) => ({
  name, description: "", risk: "read", params_schema: {}, source: "builtin", server: null, annotations: null, trusted: null,
}));
const EMPTY = { items: [], proposals: [], max_regions: 8, min_decisions: 30, identities: [] };
const path = (tool: string) => `/api/workflows/wf-1/steps/${encodeURIComponent(`analyse:${tool}`)}`;

describe("agentStepTools", () => {
  it("matches globs as fnmatch does, case-sensitive", () => {
    expect(globMatch("sql.*", "sql.query")).toBe(true);
    expect(globMatch("sql.*", "SQL.query")).toBe(false);
    expect(globMatch("file.???d", "file.read")).toBe(true);
    expect(globMatch("file.[rw]*", "file.write")).toBe(true);
    expect(globMatch("file.[!r]*", "file.read")).toBe(false);
    expect(globMatch("a+b", "a+b")).toBe(true);
  });

  it("lists names as written, a glob's matches in the registry's order, then tools called since unlisted", () => {
    expect(agentStepTools(["echo", "sql.*", "echo"], TOOLS.map((t) => t.name), ["old.tool", "sql.query"])).toEqual([
      "echo", "sql.query", "sql.exec", "old.tool",
    ]);
    expect(agentStepTools(undefined, [], [])).toEqual([]);
  });
});

describe("AgentStepRegions", () => {
  it("opens the regions of the tool with the most decisions; choosing another reads that tool's scope", async () => {
    const { calls } = stubFetch((call: RecordedCall) => {
      if (call.url === "/api/tools") return jsonResponse({ items: TOOLS });
      if (call.url.endsWith("/regions")) return jsonResponse(EMPTY);
      if (call.url.endsWith("/replay")) return jsonResponse(REPLAY);
      if (call.method === "POST") return jsonResponse({});
      return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
    });
    renderLive(
      <AgentStepRegions workflowId="wf-1" stepId="analyse" patterns={["file.read", "sql.*"]} decisions={{ "sql.query": 12 }} />,
      "/w", "/w",
    );
    const user = userEvent.setup();
    const section = await screen.findByRole("region", { name: "Regions of agent step analyse" });
    const select = within(section).getByLabelText("Tool");
    await waitFor(() => expect(within(select).getAllByRole("option")).toHaveLength(3));
    expect(within(select).getAllByRole("option").map((o) => o.textContent)).toEqual([
      "file.read", "sql.query (12 decided)", "sql.exec",
    ]);
    expect(select).toHaveValue("sql.query");
    expect(await within(section).findByRole("region", { name: "Regions of tool sql.query of agent step analyse" }))
      .toHaveTextContent("every call follows the agent step's mode");
    await user.selectOptions(select, "file.read");
    const inner = await within(section).findByRole("region", { name: "Regions of tool file.read of agent step analyse" });
    await waitFor(() => expect(calls.some((c) => c.url === `${path("file.read")}/regions`)).toBe(true));
    const form = within(inner).getByRole("form", { name: "Add a region" });
    await user.type(within(form).getByLabelText("Name"), "summaries");
    await user.type(within(form).getByLabelText("Condition"), "params.path.startswith('summaries/')");
    await user.click(within(form).getByRole("button", { name: "Add the region" }));
    await waitFor(() =>
      expect(calls.find((c) => c.method === "POST" && c.url === `${path("file.read")}/regions`)?.body).toEqual({
        name: "summaries", when: "params.path.startswith('summaries/')",
      }));
  });
});
