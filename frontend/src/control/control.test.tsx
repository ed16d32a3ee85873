import { QueryClientProvider } from "@tanstack/react-query";
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { jsonResponse, stubFetch, testQueryClient } from "../test/utils";
import { PauseDialog } from "./PauseDialog";
import { ApiError } from "../api/client";
import { detailRows, planSource } from "../plans/source";
import { Countdown } from "./Countdown";
import { formatClock, secondsLeft } from "./deadline";
import { splitStepErrors } from "./stepErrors";
import { editableSteps, pausableSteps, questionGate, type ControlledExecution } from "./types";

const execution = (over: Partial<ControlledExecution> = {}): ControlledExecution => ({
  execution_id: "ex1",
  status: "waiting_decision",
  gate: { kind: "decision", step_id: "a" },
  steps: [
    { step_id: "a", status: "waiting", tool: "echo" },
    { step_id: "b", status: "pending", tool: "echo" },
    { step_id: "c", status: "pending", type: "human_input" },
  ],
  ...over,
});

describe("deadlines", () => {
  it("formats the time left as m:ss or h:mm:ss", () => {
    expect(formatClock(272)).toBe("4:32");
    expect(formatClock(3723)).toBe("1:02:03");
    expect(formatClock(-5)).toBe("0:00");
    expect(secondsLeft(null, 0)).toBeNull();
    expect(secondsLeft("1970-01-01T00:01:00Z", 0)).toBe(60);
  });

  it("shows a countdown with what happens when it runs out", () => {
    const deadline = new Date(Date.now() + 272_500).toISOString();
    render(<Countdown deadline={deadline} onTimeout="skip" what="This suggestion" />);
    const timer = screen.getByRole("timer");
    expect(timer).toHaveTextContent(/Times out in 4:3\d → skip/);
    expect(timer).toHaveAccessibleName(/This suggestion times out in 4:3\d, then: skip\./);
  });

  it("shows nothing without a deadline", () => {
    const { container } = render(<Countdown deadline={null} onTimeout="skip" />);
    expect(container).toBeEmptyDOMElement();
  });
});

describe("which steps the controls reach", () => {
  it("pauses before the waiting step first, then the pending ones; edits pending tool steps", () => {
    expect(pausableSteps(execution()).map((s) => s.step_id)).toEqual(["a", "b", "c"]);
    expect(editableSteps(execution()).map((s) => s.step_id)).toEqual(["b"]);
    expect(questionGate(execution())).toBeNull();
  });

  it("answers a clarification pause in place, and edits the paused step", () => {
    const paused = execution({ status: "waiting_clarification", gate: { kind: "clarification", step_id: "a", question: "?" } });
    expect(questionGate(paused)?.step_id).toBe("a");
    expect(pausableSteps(paused)).toEqual([]);
    expect(editableSteps(paused).map((s) => s.step_id)).toEqual(["a", "b"]);
  });
});

describe("server errors on the fields", () => {
  it("splits a correction's 422 into the params (for the editor) and the step's fields", () => {
    const error = new ApiError(422, "validation_failed", "bad", {
      "correction.updated_step.params.url": ["is required"],
      "correction.updated_step.retries": ["must be an integer >= 0"],
    });
    const split = splitStepErrors(error);
    expect(split.params?.details).toEqual({ "correction.url": ["is required"] });
    expect(split.fields).toEqual({ retries: ["must be an integer >= 0"] });
  });

  it("reads a plan as JSON (mode set) or sends it as YAML, and lists 422 paths", () => {
    expect(planSource('{"steps": []}', "coaching")).toEqual({ json: { steps: [], mode: "coaching" } });
    expect(planSource("steps: []", "normal")).toEqual({ yaml: "steps: []\nmode: normal\n" });
    expect(() => planSource("[1]", "normal")).toThrow(/object/);
    expect(detailRows({ "steps[0].tool": ["unknown tool"], json: undefined })).toEqual([["steps[0].tool", "unknown tool"]]);
  });
});

describe("the pause dialog", () => {
  it("refuses to pause with an empty or blank question, then sends the one written", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(() =>
      jsonResponse({ execution_id: "ex1", state: "waiting_clarification", step_id: "a", question: "Why?" }),
    );
    const onDone = vi.fn();
    render(
      <QueryClientProvider client={testQueryClient()}>
        <PauseDialog executionId="ex1" steps={[{ step_id: "a", status: "waiting", tool: "echo" }]} onDone={onDone}
          onClose={() => undefined} />
      </QueryClientProvider>,
    );
    const question = screen.getByLabelText("Question");
    await user.type(question, "   {Enter}");
    expect(screen.getByRole("alert")).toHaveTextContent("Write the question first");
    expect(question).toHaveAttribute("aria-invalid", "true");
    expect(question).toHaveFocus();
    expect(calls).toHaveLength(0);

    await user.type(question, "Why?{Enter}");
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    await waitFor(() => expect(onDone).toHaveBeenCalledWith("Paused before a."));
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toEqual({ step_id: "a", question: "Why?" });
  });
});

describe("the step edit dialog", () => {
  const HTTP_SCHEMA = {
    type: "object",
    properties: {
      url: { type: "string", pattern: "^[Hh][Tt][Tt][Pp][Ss]?://" },
      json: {},
      timeout_s: { type: "number", exclusiveMinimum: 0 },
    },
    required: ["url"],
    additionalProperties: false,
  };

  it("judges a template as a template: saves the demo's HTTP step with only Retries changed", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(() => jsonResponse({ execution_id: "ex1", status: "waiting_decision" }));
    const onDone = vi.fn();
    const { StepEditDialog } = await import("./StepEditDialog");
    render(
      <QueryClientProvider client={testQueryClient()}>
        <StepEditDialog
          executionId="ex1"
          steps={[{
            step_id: "ping", status: "pending", tool: "http.request", params_schema: HTTP_SCHEMA,
            definition: { tool: "http.request", params: { url: "{{ vars.base_url }}/healthz", json: { n: 1 } }, retries: 1 },
          }]}
          onDone={onDone}
          onClose={() => undefined}
        />
      </QueryClientProvider>,
    );
    const url = await screen.findByLabelText(/^url/, {}, { timeout: 5000 });
    expect(url).toHaveValue("{{ vars.base_url }}/healthz");
    expect(screen.queryByText(/does not match/)).not.toBeInTheDocument();
    // an object the tool takes in any shape is drawn as its fields, editable
    expect(screen.getByLabelText("n")).toHaveValue("1");

    await user.clear(screen.getByLabelText("Retries"));
    await user.type(screen.getByLabelText("Retries"), "3");
    await user.click(screen.getByRole("button", { name: /Save the step/ }));
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    expect(calls[0].body).toEqual({
      step_id: "ping",
      correction: { updated_step: { params: { url: "{{ vars.base_url }}/healthz", json: { n: 1 } }, retries: 3 } },
    });
  });

  it("still refuses a literal value that breaks the schema", async () => {
    const user = userEvent.setup();
    const { calls } = stubFetch(() => jsonResponse({}));
    const { StepEditDialog } = await import("./StepEditDialog");
    render(
      <QueryClientProvider client={testQueryClient()}>
        <StepEditDialog
          executionId="ex1"
          steps={[{ step_id: "ping", status: "pending", tool: "http.request", params_schema: HTTP_SCHEMA,
            definition: { tool: "http.request", params: { url: "{{ vars.base_url }}/healthz" } } }]}
          onDone={() => undefined}
          onClose={() => undefined}
        />
      </QueryClientProvider>,
    );
    const url = await screen.findByLabelText(/^url/, {}, { timeout: 5000 });
    await user.clear(url);
    await user.type(url, "ftp://example.com");
    await user.click(screen.getByRole("button", { name: /Save the step/ }));
    expect(screen.getByRole("alert")).toHaveTextContent("Not sent: fix these first.");
    expect(calls).toHaveLength(0);
  });
});
