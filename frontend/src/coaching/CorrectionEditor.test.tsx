import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/client";
import CorrectionEditor from "./CorrectionEditor";
import { FILE_READ_SCHEMA, suggestion } from "./testFixtures";
import type { Suggestion } from "./types";

function renderEditor(s: Suggestion = suggestion(), serverError: unknown = null) {
  const onSubmit = vi.fn();
  const onCancel = vi.fn();
  const props = { suggestion: s, sending: false, serverError, onSubmit, onCancel };
  const utils = render(<CorrectionEditor {...props} />);
  return { ...utils, onSubmit, onCancel, props, user: userEvent.setup() };
}

const diff = () => screen.getByRole("region", { name: "Changes from the suggestion" });
const fileRead = (params: Record<string, unknown>) =>
  suggestion({ tool: "file.read", params, params_schema: FILE_READ_SCHEMA });

describe("CorrectionEditor", () => {
  it("draws a form from the params (and the tool's schema) and shows each edit in the diff", async () => {
    const { user, onSubmit } = renderEditor();

    const message = screen.getByLabelText(/^message/);
    expect(message).toHaveFocus();
    expect(message).toHaveValue("hi Ada");
    expect(diff()).toHaveTextContent("No changes from the suggestion.");

    await user.clear(message);
    await user.type(message, "hello Ada");
    await user.clear(screen.getByLabelText(/^count/));
    await user.type(screen.getByLabelText(/^count/), "3");

    const items = within(diff()).getAllByRole("listitem");
    expect(items.map((li) => li.textContent)).toEqual([
      "~ changed count: 2 →becomes 3",
      '~ changed message: "hi Ada" →becomes "hello Ada"',
    ]);
    await user.click(screen.getByRole("button", { name: /Send correction/ }));
    expect(onSubmit).toHaveBeenCalledWith({ message: "hello Ada", count: 3 });
  });

  it("shows added and removed fields with words and symbols", async () => {
    const { user } = renderEditor(fileRead({ path: "in.csv", encoding: "latin-1" }));
    await user.click(screen.getByRole("tab", { name: "Raw JSON" }));
    const raw = screen.getByLabelText("Params as JSON");
    await user.clear(raw);
    await user.click(raw);
    await user.paste('{"path": "in.csv", "max_bytes": 10}');

    expect(within(diff()).getAllByRole("listitem").map((li) => li.textContent)).toEqual([
      "− removed encoding (was \"latin-1\")",
      "+ added max_bytes: 10",
    ]);
  });

  it("shows raw JSON that does not parse, and will not send it", async () => {
    const { user, onSubmit } = renderEditor();
    await user.click(screen.getByRole("tab", { name: "Raw JSON" }));
    const raw = screen.getByLabelText("Params as JSON");
    expect(JSON.parse((raw as HTMLTextAreaElement).value)).toEqual({ message: "hi Ada", count: 2 });

    await user.clear(raw);
    await user.click(raw);
    await user.paste('{"message": "x",');
    expect(raw).toHaveAttribute("aria-invalid", "true");
    expect(raw).toHaveAccessibleDescription(/Not valid JSON/);

    await user.click(screen.getByRole("button", { name: /Send correction/ }));
    expect(onSubmit).not.toHaveBeenCalled();
    expect(screen.getByRole("alert")).toHaveTextContent(/Not sent: fix these first\.Raw JSON: Not valid JSON/);

    await user.clear(raw);
    await user.click(raw);
    await user.paste("[1, 2]");
    expect(raw).toHaveAccessibleDescription("✕ The params must be a JSON object ({ … }).");
  });

  it("checks the params against the tool's schema and refuses to send invalid ones", async () => {
    const { user, onSubmit } = renderEditor(fileRead({ path: "in.csv", max_bytes: 100 }));

    const path = screen.getByLabelText(/^path/);
    await user.clear(path);
    await user.clear(screen.getByLabelText("max_bytes"));
    await user.type(screen.getByLabelText("max_bytes"), "0");

    const pathGroup = path.closest(".form-group") as HTMLElement;
    expect(within(pathGroup).getByText("is required")).toBeInTheDocument();
    const bytesGroup = screen.getByLabelText("max_bytes").closest(".form-group") as HTMLElement;
    expect(within(bytesGroup).getByText("must be 1 or more")).toBeInTheDocument();

    await user.click(screen.getByRole("button", { name: /Send correction/ }));
    expect(onSubmit).not.toHaveBeenCalled();
    const summary = screen.getByRole("alert");
    expect(summary).toHaveTextContent("Not sent: fix these first.");
    expect(summary).toHaveTextContent("path: is required");
    expect(summary).toHaveTextContent("max_bytes: must be 1 or more");
    expect(summary).toHaveFocus();

    await user.type(path, "in.csv");
    await user.clear(screen.getByLabelText("max_bytes"));
    await user.type(screen.getByLabelText("max_bytes"), "5");
    await user.click(screen.getByRole("button", { name: /Send correction/ }));
    expect(onSubmit).toHaveBeenCalledWith({ path: "in.csv", max_bytes: 5 });
  });

  it("shows the server's 422 details on the fields they name, and a summary", async () => {
    const { user, rerender, props } = renderEditor(fileRead({ path: "in.csv" }));
    await user.clear(screen.getByLabelText(/^path/));
    await user.type(screen.getByLabelText(/^path/), "/etc/passwd");
    await user.click(screen.getByRole("button", { name: /Send correction/ }));
    expect(props.onSubmit).toHaveBeenCalledWith({ path: "/etc/passwd" });

    const refused = new ApiError(422, "validation_failed", "the correction does not fit tool 'file.read'", {
      "correction.path": ["path escapes the data folder"],
      correction: ["something about the whole"],
    });
    rerender(<CorrectionEditor {...props} serverError={refused} />);

    const group = screen.getByLabelText(/^path/).closest(".form-group") as HTMLElement;
    expect(within(group).getByText("path escapes the data folder")).toBeInTheDocument();
    const summary = screen.getByRole("alert");
    expect(summary).toHaveTextContent("The server refused the correction:");
    expect(summary).toHaveTextContent("path: path escapes the data folder");
    expect(summary).toHaveTextContent("params: something about the whole");

    // the server's errors belong to what was sent: editing again clears them
    await user.type(screen.getByLabelText(/^path/), "x");
    expect(screen.queryByText("path escapes the data folder")).not.toBeInTheDocument();
  });

  it("keeps a number a number, and shows `abc` typed into a number field in place, refusing to send it", async () => {
    const s = suggestion({ params: { rows: 2, total: 12.5 }, definition_params: { rows: "{{ n }}", total: "{{ t }}" } });
    const { user, onSubmit } = renderEditor(s);
    const total = screen.getByLabelText(/^total/);
    expect(total).toHaveValue("12.5");

    await user.clear(total);
    await user.type(total, "abc");
    expect(total).toHaveValue("abc"); // shown as typed, never blanked
    const group = total.closest(".form-group") as HTMLElement;
    expect(within(group).getByText("must be a number, not 'abc'")).toBeInTheDocument();
    expect(within(diff()).getAllByRole("listitem").map((li) => li.textContent)).toEqual([
      '~ changed total: 12.5 →becomes "abc"',
    ]);

    await user.click(screen.getByRole("button", { name: /Send correction/ }));
    await user.keyboard("{Control>}{Enter}{/Control}");
    expect(onSubmit).not.toHaveBeenCalled();
    expect(screen.getByRole("alert")).toHaveTextContent("total: must be a number, not 'abc'");

    await user.clear(total);
    expect(within(total.closest(".form-group") as HTMLElement).getByText("is required")).toBeInTheDocument();
    await user.click(total);
    await user.keyboard("{Control>}{Enter}{/Control}");
    expect(onSubmit).not.toHaveBeenCalled();

    await user.type(total, "13.75");
    await user.keyboard("{Control>}{Enter}{/Control}");
    expect(onSubmit).toHaveBeenCalledTimes(1);
    expect(onSubmit).toHaveBeenCalledWith({ rows: 2, total: 13.75 });
    expect(typeof onSubmit.mock.calls[0][0].total).toBe("number");
  });

  it("keeps what was typed when the policy denies it, with the refusal beside the changed field", async () => {
    const schema = { type: "object", properties: { url: { type: "string" }, method: { type: "string" } } };
    const s = suggestion({ tool: "http.request", params: { url: "https://ok.example/x", method: "GET" }, params_schema: schema });
    const { user, rerender, props } = renderEditor(s);
    const url = screen.getByLabelText(/^url/);
    await user.clear(url);
    await user.type(url, "https://evil.example/x");
    await user.click(screen.getByRole("button", { name: /Send correction/ }));
    expect(props.onSubmit).toHaveBeenCalledWith({ url: "https://evil.example/x", method: "GET" });

    const denied = new ApiError(409, "policy_denied", "this call is denied by policy 'Known hosts': only our APIs", {
      policy: { effect: "deny" },
      decision: "correct",
    });
    rerender(<CorrectionEditor {...props} serverError={denied} />);
    expect(screen.getByLabelText(/^url/)).toHaveValue("https://evil.example/x"); // kept, to change again
    const group = screen.getByLabelText(/^url/).closest(".form-group") as HTMLElement;
    expect(within(group).getByText("this call is denied by policy 'Known hosts': only our APIs")).toBeInTheDocument();
    const method = screen.getByLabelText(/^method/).closest(".form-group") as HTMLElement;
    expect(within(method).queryByText(/denied by policy/)).not.toBeInTheDocument();
    expect(screen.getByRole("alert")).toHaveTextContent(/^Refused by the policy: this call is denied by policy 'Known hosts'/);
    expect(screen.queryByText("The correction was not applied")).not.toBeInTheDocument();

    await user.type(screen.getByLabelText(/^url/), "y"); // a change: the refusal was of what was sent
    expect(screen.queryByText(/denied by policy/)).not.toBeInTheDocument();
  });

  it("shows other failures as a notice", () => {
    renderEditor(suggestion(), new ApiError(0, "network_error", "Could not reach the Coach server."));
    expect(screen.getByText("The correction was not applied")).toBeInTheDocument();
    expect(screen.getByText("Could not reach the Coach server.")).toBeInTheDocument();
  });
});
