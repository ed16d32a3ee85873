import { screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderApp, stubSignedInFetch } from "../test/auth";
import { jsonResponse } from "../test/utils";

function screenLike({ narrow, touch }: { narrow: boolean; touch: boolean }) {
  vi.stubGlobal("matchMedia", (query: string) => ({
    matches: (query === "(max-width: 640px)" && narrow) || (query === "(pointer: coarse)" && touch),
    media: query, addEventListener: () => undefined, removeEventListener: () => undefined,
  }));
}

afterEach(() => vi.unstubAllGlobals());

describe("The queue on a phone", () => {
  it("folds the filters away and drops the keyboard hint on a narrow touch screen", async () => {
    screenLike({ narrow: true, touch: true });
    stubSignedInFetch(() => jsonResponse({ items: [], total: 0, page: 1, per_page: 50 }));
    renderApp("/queue");
    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
    const fold = screen.getByText("Filters").closest("details");
    expect(fold).not.toBeNull();
    expect(fold).not.toHaveAttribute("open");
    expect(document.getElementById("queue-hint")).toBeNull();
    await userEvent.setup().click(screen.getByText("Filters"));
    expect(fold).toHaveAttribute("open");
  });

  it("shows the filters and the keys on a wide screen with a keyboard", async () => {
    screenLike({ narrow: false, touch: false });
    stubSignedInFetch(() => jsonResponse({ items: [], total: 0, page: 1, per_page: 50 }));
    renderApp("/queue");
    expect(await screen.findByRole("heading", { level: 1, name: "Queue" })).toBeInTheDocument();
    expect(document.querySelector(".queue__filters-fold")).toBeNull();
    expect(document.getElementById("queue-hint")).toHaveTextContent("j / k move the selection");
  });
});
