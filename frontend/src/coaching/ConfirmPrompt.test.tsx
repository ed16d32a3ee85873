import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfirmPrompt } from "./ConfirmPrompt";

const PROMPT = "Press Enter to accept Pay the supplier (http.request, amount 1,840; external).";

function pointer(coarse: boolean) {
  vi.stubGlobal("matchMedia", (query: string) => ({
    matches: coarse && query === "(pointer: coarse)", media: query,
    addEventListener: () => undefined, removeEventListener: () => undefined,
  }));
}

afterEach(() => vi.unstubAllGlobals());

describe("ConfirmPrompt", () => {
  it("tells a touch screen to tap Confirm, with no keys, and the button sends it", async () => {
    pointer(true);
    const onConfirm = vi.fn();
    render(<ConfirmPrompt prompt={PROMPT} onCancel={() => undefined} onConfirm={onConfirm} />);
    const prompt = screen.getByTestId("confirm-prompt");
    expect(prompt).toHaveTextContent("Tap Confirm to accept Pay the supplier");
    expect(prompt).not.toHaveTextContent("Press Enter");
    expect(prompt).not.toHaveTextContent("Esc");
    await userEvent.setup().click(screen.getByRole("button", { name: "Confirm" }));
    expect(onConfirm).toHaveBeenCalledOnce();
  });

  it("keeps the keys on a keyboard and mouse", () => {
    pointer(false);
    render(<ConfirmPrompt prompt={PROMPT} onCancel={() => undefined} onConfirm={() => undefined} />);
    expect(screen.getByTestId("confirm-prompt")).toHaveTextContent("Press Enter to accept");
    expect(screen.getByRole("button", { name: "Confirm Enter" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Cancel Esc" })).toBeInTheDocument();
  });
});
