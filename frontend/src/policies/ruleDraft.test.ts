import { describe, expect, it } from "vitest";
import { draftToRule, toDraft } from "./ruleDraft";
import type { PolicyRule } from "./types";

const RULE: PolicyRule = {
  id: "r-1", revision: 1, name: "Ask before refunds", order: 10, effect: "confirm", fallback: "deny", reason: "money",
  enabled: true, scope: { workflow_id: null, user: null }, match: { tool: "shop.refund", agent: "*" },
};

describe("a confirm rule's draft", () => {
  it("keeps the fallback of a confirm rule and sends it", () => {
    const draft = toDraft(RULE);
    expect(draft.fallback).toBe("deny");
    expect(draftToRule(draft).rule).toMatchObject({ effect: "confirm", fallback: "deny" });
  });

  it("starts a new rule's fallback at require_review and sends none for another effect", () => {
    const draft = toDraft(null);
    expect(draft.fallback).toBe("require_review");
    const rule = draftToRule({ ...draft, name: "x", effect: "deny" }).rule;
    expect(rule).toBeDefined();
    expect(rule && "fallback" in rule).toBe(false);
  });
});
