import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { Workflow } from "../api/types";
import { StartDialog, startModes, variableSpecs } from "./StartDialog";

const workflow: Workflow = {
  id: "wf",
  name: "Batch",
  version: 1,
  latest_version: 1,
  level: "COACHING",
  auto_ready: false,
  mode: "coaching",
  steps: [],
  variables: { label: "nightly", limit: 10, count: { type: "integer", required: true } },
};

describe("StartDialog", () => {
  it("reads shorthand declarations (`label: nightly`) as a default", () => {
    expect(variableSpecs(workflow.variables)).toEqual([
      ["label", { default: "nightly" }],
      ["limit", { default: 10 }],
      ["count", { type: "integer", required: true }],
    ]);
  });

  it("fills shorthand defaults in, sends typed values, and offers normal to leads only", async () => {
    const onStart = vi.fn();
    render(<StartDialog workflow={workflow} role="operator" busy={false} error={null} onStart={onStart} onCancel={() => {}} />);
    const dialog = screen.getByRole("dialog");
    expect(within(dialog).getByLabelText("label")).toHaveValue("nightly");
    expect(within(dialog).getByLabelText("limit")).toHaveValue("10");
    expect(within(dialog).getAllByRole("option").map((o) => o.textContent)).toEqual(["coaching (the workflow's mode)"]);
    const user = userEvent.setup();
    await user.type(within(dialog).getByLabelText(/^count/), "3");
    await user.click(within(dialog).getByRole("button", { name: "Start run" }));
    expect(onStart).toHaveBeenCalledWith({ workflow, mode: "coaching", variables: { label: "nightly", limit: 10, count: 3 } });
    expect(startModes({ ...workflow, mode: "auto" }, "lead")).toEqual(["auto", "coaching", "normal"]);
  });
});
