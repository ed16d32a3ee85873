import { describe, expect, it } from "vitest";
import { noticeBody, noticeFromGatewayEvent, noticeTitle } from "./describe";

describe("gateway tool demotions as notices", () => {
  it("names the tool and the agent, with the spot checks' reason", () => {
    const notice = noticeFromGatewayEvent({
      tool: "shop.add", agent: "bot-1", mode: "coaching", previous_mode: "auto", audit_seq: 41,
      reason: "spot checks show acceptance below 85%",
    }, "2026-11-28T00:00:00Z");
    expect(notice).toMatchObject({ id: 41, kind: "gateway_demotion", tool: "shop.add", agent: "bot-1" });
    expect(noticeTitle(notice!, "")).toBe("Gateway tool “shop.add” for agent “bot-1” was demoted to coaching");
    expect(noticeBody(notice!)).toBe("Spot checks show acceptance below 85%.");
  });

  it("is no notice for a promotion", () => {
    expect(noticeFromGatewayEvent({ tool: "shop.add", agent: null, mode: "auto", previous_mode: "coaching",
                                    audit_seq: 3 })).toBeNull();
  });
});
