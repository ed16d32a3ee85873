import { render, screen, waitFor, within } from "@testing-library/react";
import { QueryClientProvider } from "@tanstack/react-query";
import { MemoryRouter } from "react-router-dom";
import { describe, expect, it } from "vitest";
import { SuggestionCard } from "../coaching/SuggestionCard";
import { suggestion } from "../coaching/testFixtures";
import { jsonResponse, stubFetch, testQueryClient } from "../test/utils";
import { AgentTranscript } from "./AgentTranscript";
import type { PolicyVerdict } from "../approvals/types";
import type { Transcript } from "./types";

const allow: PolicyVerdict = {
  effect: "allow",
  default: true,
  rule: { id: null, name: "workspace default", scope: "workspace", reason: "no rule matched" },
  matched: [],
};

const transcript: Transcript = {
  execution_id: "ex-1",
  step_id: "analyse",
  status: "waiting",
  messages: [
    { seq: 0, role: "system", content: "You are the agent…", turn: 0 },
    { seq: 1, role: "user", kind: "goal", content: "Sum the invoices", turn: 0 },
    {
      seq: 2,
      role: "assistant",
      content: "I read the file first.",
      turn: 1,
      tool_calls: [{ id: "call_1", name: "file_read", arguments: '{"path":"invoices.csv"}' }],
    },
    {
      seq: 3,
      role: "tool",
      content: "[… trimmed …]",
      turn: 1,
      tool_call_id: "call_1",
      tool: "file.read",
      arguments: { path: "invoices.csv" },
      params: { path: "invoices.csv" },
      status: "done",
      decision: "allow",
      policy: allow,
      trimmed: true,
    },
    {
      seq: 4,
      role: "assistant",
      content: "Now write.",
      turn: 2,
      tool_calls: [{ id: "call_2", name: "file_write", arguments: '{"path":"out.txt"}' }],
    },
    {
      seq: 5,
      role: "tool",
      content: null,
      turn: 2,
      tool_call_id: "call_2",
      tool: "file.write",
      arguments: { path: "out.txt" },
      status: "review",
      suggestion_id: "sug-2",
      policy: {
        ...allow,
        effect: "require_review",
        default: false,
        rule: { id: "r1", name: "writes", scope: "workspace", reason: "look first" },
      },
    },
  ],
};

function renderTranscript(highlight?: string) {
  stubFetch(() => jsonResponse(transcript));
  return render(
    <QueryClientProvider client={testQueryClient()}>
      <MemoryRouter>
        <AgentTranscript executionId="ex-1" stepId="analyse" stepStatus="waiting" highlight={highlight} />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe("an agent step's conversation", () => {
  it("shows the LLM's turns and each tool call with its verdict, decision and result, trimmed results marked", async () => {
    renderTranscript("sug-2");
    const items = await screen.findAllByRole("listitem");
    expect(items).toHaveLength(6);
    expect(items[1]).toHaveTextContent("Goal");
    expect(items[2]).toHaveTextContent("LLM, turn 1");
    expect(items[2]).toHaveTextContent("asks for 1 tool call");
    const read = items[3];
    expect(read).toHaveTextContent("Tool call file.read");
    expect(read).toHaveTextContent("Allowed");
    expect(read).toHaveTextContent("ran (allowed by the policy)");
    expect(within(read).getByText("trimmed to fit the context budget")).toBeInTheDocument();
    const write = items[5];
    expect(write).toHaveTextContent("Needs review");
    expect(write).toHaveTextContent("waiting for a decision");
    expect(write).toHaveTextContent("shown above");
    expect(write).toHaveTextContent("Rule writes (workspace rule): look first");
  });
});

describe("a tool-call suggestion", () => {
  it("names the tool and the agent step, and shows the arguments and the agent's reasoning", () => {
    render(
      <MemoryRouter>
        <SuggestionCard
          suggestion={suggestion({
            kind: "tool_call",
            tool: "file.write",
            step_id: "analyse",
            step_name: "analyse",
            tool_call_id: "call_2",
            source: "llm",
            rationale: "Now write the summary.",
            params: { path: "out.txt" },
          })}
        />
      </MemoryRouter>,
    );
    expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Tool call: file.write (agent step analyse)");
    expect(screen.getByText("The agent's reasoning")).toBeInTheDocument();
    expect(screen.getByText("Now write the summary.")).toBeInTheDocument();
    expect(screen.getByText("Arguments")).toBeInTheDocument();
    expect(screen.getByTestId("suggested-params")).toHaveTextContent('"path": "out.txt"');
    expect(screen.getByText("call_2")).toBeInTheDocument();
    expect(screen.getByText("The language model")).toBeInTheDocument();
  });
});

describe("an agent's question (CONFIRM_DATA)", () => {
  it("is answered in place, through the step's answer route", async () => {
    const { GateAnswer } = await import("../control/GateAnswer");
    const userEvent = (await import("@testing-library/user-event")).default;
    const calls = stubFetch(() => jsonResponse({ ok: true }));
    render(
      <QueryClientProvider client={testQueryClient()}>
        <GateAnswer
          executionId="ex-1"
          gate={{ kind: "clarification", step_id: "analyse", question: "4 invoices totalling 5440.74, correct?", agent: true }}
        />
      </QueryClientProvider>,
    );
    expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("The agent asks: analyse");
    await userEvent.type(screen.getByLabelText(/Your answer/), "Yes{Enter}");
    await waitFor(() => expect(calls.calls).toHaveLength(1));
    expect(calls.calls[0].url).toContain("/api/executions/ex-1/steps/analyse/answer");
    expect(calls.calls[0].body).toEqual({ answer: "Yes" });
  });
});
