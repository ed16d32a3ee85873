import { render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { describe, expect, it } from "vitest";
import { SuggestionCard } from "./SuggestionCard";
import { suggestion } from "./testFixtures";
import { WaitingNotice } from "./WaitingNotice";

describe("the policy on the operator side", () => {
  it("shows a denied suggestion's rule and says accept and correct will be refused", () => {
    render(
      <MemoryRouter>
        <SuggestionCard
          suggestion={suggestion({
            tool: "file.write",
            policy: {
              effect: "deny",
              default: false,
              rule: { id: "r-9", name: "no secrets", scope: "workspace", order: 5, reason: "nothing is written to secrets/" },
              matched: [],
            },
          })}
        />
      </MemoryRouter>,
    );
    const verdict = screen.getByTestId("policy-verdict");
    expect(verdict).toHaveTextContent("Denied");
    expect(verdict).toHaveTextContent("Rule no secrets (workspace rule, order 5): nothing is written to secrets/");
    expect(screen.getByTestId("policy-deny-note")).toHaveTextContent("would be denied");
  });

  it("shows the workspace default when no rule matched", () => {
    render(
      <MemoryRouter>
        <SuggestionCard
          suggestion={suggestion({
            policy: { effect: "allow", default: true, rule: { id: null, name: "workspace default", scope: "workspace", reason: "no rule matched; the workspace default for read tools is allow" }, matched: [] },
          })}
        />
      </MemoryRouter>,
    );
    expect(screen.getByTestId("policy-verdict")).toHaveTextContent("Allowed no rule matched; the workspace default for read tools is allow");
  });

  it("points a waiting approval to the approval on the queue", () => {
    render(
      <MemoryRouter>
        <WaitingNotice status="waiting_approval" mode="coaching" executionId="ex-1" gate={{ kind: "approval", approval_id: "ap-7", message: "Pay 1200?" }} />
      </MemoryRouter>,
    );
    const notice = screen.getByRole("status");
    expect(notice).toHaveTextContent("Waiting for an approval: Pay 1200?");
    expect(within(notice).getByRole("link", { name: "Decide the approval on the queue" })).toHaveAttribute("href", "/queue?approval=ap-7");
  });
});

describe("the region of a suggestion", () => {
  it("names the region the call fell in, with its mode, and nothing when it fell in none", () => {
    const { rerender } = render(
      <MemoryRouter>
        <SuggestionCard suggestion={suggestion({ region: { id: "r-1", name: "small refunds", mode: "auto", current: true } })} />
      </MemoryRouter>,
    );
    const card = screen.getByRole("region", { name: /Suggestion:/ });
    expect(within(card).getByText("Region").nextElementSibling).toHaveTextContent("small refunds (auto)");
    rerender(
      <MemoryRouter>
        <SuggestionCard suggestion={suggestion({ region: { id: "r-1", name: "small refunds", mode: "coaching", current: false } })} />
      </MemoryRouter>,
    );
    expect(screen.getByText("small refunds (coaching; its condition changed since)")).toBeInTheDocument();
    rerender(
      <MemoryRouter>
        <SuggestionCard suggestion={suggestion({ region: null })} />
      </MemoryRouter>,
    );
    expect(screen.queryByText("Region")).toBeNull();
  });
});
