import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { ApiError } from "../api/client";
import { jsonResponse, renderPage, stubFetch } from "../test/utils";
import { convert, definitionOf, read, serverProblems } from "./source";
import WorkflowEditorPage, { BLANK_TEMPLATE } from "./WorkflowEditorPage";

// jsdom lays nothing out: CodeMirror measures text ranges, which jsdom's Range lacks
if (!Range.prototype.getClientRects) {
  Range.prototype.getClientRects = () => ({ length: 0, item: () => null, [Symbol.iterator]: [][Symbol.iterator] }) as unknown as DOMRectList;
  Range.prototype.getBoundingClientRect = () => new DOMRect(0, 0, 0, 0);
}

const TEMPLATE = { id: "refund_review", name: "Refund review", description: "", yaml: "name: Refund review\nsteps:\n  - id: a\n    tool: echo\n" };

function openEditor(route = "/workflows/new", answer: () => Response = () => jsonResponse({ id: "wf-9", name: "My workflow", version: 1 }, 201)) {
  const { calls } = stubFetch((call) => {
    if (call.url === "/api/workflows/templates") return jsonResponse({ items: [TEMPLATE] });
    if (call.method === "GET" && call.url === "/api/workflows/wf-1") {
      return jsonResponse({ id: "wf-1", name: "Greeter", version: 2, latest_version: 2, steps: [{ tool: "echo", id: "greet" }], variables: {}, level: "COACHING", mode: "coaching" });
    }
    return answer();
  });
  const path = route === "/workflows/new" ? "/workflows/new" : "/workflows/:id/edit";
  renderPage(<WorkflowEditorPage />, { route, path });
  return { calls, user: userEvent.setup() };
}

const editorText = () => document.querySelector(".cm-content")?.textContent ?? "";

describe("definition source", () => {
  it("converts YAML and JSON both ways and says the line of what cannot be read", () => {
    const json = convert(BLANK_TEMPLATE, "yaml", "json") ?? "";
    expect(JSON.parse(json).steps[0].id).toBe("greet");
    expect(convert(json, "json", "yaml")).toContain("name: My workflow");
    const bad = read("name: x\nsteps: [\n  {id: a\n", "yaml");
    expect("problem" in bad && bad.problem.line).toBeGreaterThanOrEqual(3);
    expect(convert("{", "json", "yaml")).toBeUndefined();
  });

  it("writes a step's keys in the order people write them, and keeps the workflow's gate defaults", () => {
    const text = JSON.stringify(definitionOf({ name: "x", steps: [{ tool: "echo", params: {}, id: "a", name: "A" }], human_timeout_s: 60 }));
    expect(text).toBe('{"name":"x","human_timeout_s":60,"steps":[{"id":"a","name":"A","tool":"echo","params":{}}]}');
  });

  it("splits the server's errors into those it placed on a line and the rest", () => {
    const error = new ApiError(422, "validation_failed", "bad", { "steps[1].tool": ["unknown tool"], name: ["is required"] }, undefined, { "steps[1].tool": 10 });
    expect(serverProblems(error)).toEqual({ placed: [{ line: 10, message: "steps[1].tool: unknown tool" }], unplaced: [["name", "is required"]] });
    const syntax = new ApiError(400, "bad_request", "malformed", { yaml: ["YAML syntax error on line 3, column 1: …"] }, undefined, { yaml: 3 });
    expect(serverProblems(syntax).placed).toEqual([{ line: 3, message: "YAML syntax error on line 3, column 1: …" }]);
  });
});

describe("WorkflowEditorPage", () => {
  it("starts from a template and posts the YAML as YAML", async () => {
    const { calls, user } = openEditor();
    await waitFor(() => expect(editorText()).toContain("name: My workflow"));
    await screen.findByRole("option", { name: "Refund review" });
    await user.selectOptions(screen.getByLabelText("Template"), "refund_review");
    await user.click(screen.getByRole("button", { name: "Use template" }));
    await waitFor(() => expect(editorText()).toContain("name: Refund review"));
    await user.click(screen.getByRole("button", { name: "Create workflow" }));
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/workflows/wf-9"));
    const post = calls.find((c) => c.method === "POST");
    expect(post?.url).toBe("/api/workflows");
    expect((post?.init?.headers as Record<string, string>)["Content-Type"]).toBe("application/yaml");
    expect(post?.init?.body).toBe(TEMPLATE.yaml);
  });

  it("marks the server's 422 on its line and lists every problem", async () => {
    const details = { "steps[0].tool": ["unknown tool 'x'"], name: ["too long"] };
    const { user } = openEditor("/workflows/new", () =>
      jsonResponse({ error: { code: "validation_failed", message: "invalid", details, lines: { "steps[0].tool": 8 } } }, 422),
    );
    await waitFor(() => expect(editorText()).toContain("name: My workflow"));
    await user.click(screen.getByRole("button", { name: "Create workflow" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("2 problems: nothing was saved.");
    expect(alert).toHaveTextContent("line 8 steps[0].tool: unknown tool 'x'");
    expect(alert).toHaveTextContent("name too long");
    await waitFor(() => expect(document.querySelectorAll(".cm-lintRange-error").length).toBe(1));
    expect(document.querySelector(".cm-line:has(.cm-lintRange-error)")?.textContent).toBe("    tool: echo");
  });

  it("edits the latest version as JSON when chosen, and PUTs it", async () => {
    const { calls, user } = openEditor("/workflows/wf-1/edit", () => jsonResponse({ id: "wf-1", name: "Greeter", version: 3 }));
    await waitFor(() => expect(editorText()).toContain("id: greet"));
    expect(screen.getByText(/Saving makes version 3/)).toBeInTheDocument();
    await user.click(screen.getByLabelText("JSON"));
    await waitFor(() => expect(editorText()).toContain('"id": "greet"'));
    await user.click(screen.getByRole("button", { name: "Save new version" }));
    await waitFor(() => expect(calls.some((c) => c.method === "PUT" && c.url === "/api/workflows/wf-1")).toBe(true));
    const put = calls.find((c) => c.method === "PUT");
    expect((put?.init?.headers as Record<string, string>)["Content-Type"]).toBe("application/json");
    expect(JSON.parse(String(put?.init?.body)).steps).toEqual([{ id: "greet", tool: "echo" }]);
    localStorage.removeItem("coach.editorFormat");
  });
});
