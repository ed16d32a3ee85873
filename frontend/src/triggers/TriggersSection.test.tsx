import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { errorResponse, jsonResponse, renderPage, stubFetch } from "../test/utils";
import { curlExample, exampleBody } from "./api";
import { TriggersSection } from "./TriggersSection";

const HOOK = {
  id: "h1", workflow_id: "wf", name: "shop", mapping: {}, mode: null, path: "/api/hooks/h1",
  url: "http://coach.test/api/hooks/h1", created_by: "lead@x", created_at: "2026-11-28T00:00:00+00:00",
  last_used_at: null, revoked_at: null, active: true,
};
const SCHEDULE = {
  id: "s1", workflow_id: "wf", name: "mornings", cron: "0 9 * * MON-FRI", timezone: "Europe/Berlin",
  description: "At 09:00 on Monday through Friday", variables: { order_id: "S" }, mode: null, enabled: true,
  next_fire_at: "2026-11-30T08:00:00+00:00",
  next_fire_times: ["2026-11-30T08:00:00+00:00", "2026-12-01T08:00:00+00:00", "2026-12-02T08:00:00+00:00"],
  last_fired_at: null, last_execution_id: null, last_error: "", created_by: "lead@x",
  created_at: "2026-11-28T00:00:00+00:00",
};

function stub(hooks: unknown[] = [], schedules: unknown[] = []) {
  return stubFetch((call) => {
    if (call.url === "/api/workflows/wf/hooks" && call.method === "GET") return jsonResponse({ items: hooks });
    if (call.url === "/api/workflows/wf/hooks" && call.method === "POST")
      return jsonResponse({ ...HOOK, name: (call.body as { name: string }).name, secret: "whsec_once" }, 201);
    if (call.url === "/api/workflows/wf/schedules" && call.method === "GET") return jsonResponse({ items: schedules });
    if (call.url === "/api/workflows/wf/schedules" && call.method === "POST")
      return errorResponse(422, "validation_failed", "the schedule is invalid", { "variables.order_id": ["is required"] });
    if (call.url.startsWith("/api/workflows/wf/schedules/preview?"))
      return new URLSearchParams(call.url.split("?")[1]).get("cron") === "61 * * * *"
        ? errorResponse(422, "validation_failed", "invalid cron expression", { cron: ["Bad minute"] })
        : jsonResponse({ cron: "0 9 * * MON-FRI", timezone: "UTC", description: "At 09:00 on Monday through Friday",
            next_fire_times: ["2026-11-30T09:00:00+00:00"] });
    return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
  });
}

const variables = { order_id: { type: "string", required: true }, amount: { type: "number", default: 2 } };
const render = (lead: boolean) =>
  renderPage(<TriggersSection workflowId="wf" workflowName="Intake" variables={variables} lead={lead} />,
    { route: "/", path: "/" });

describe("TriggersSection", () => {
  it("shows a new webhook's secret once, with a signed curl example, until hidden", async () => {
    const { calls } = stub();
    const user = userEvent.setup();
    render(true);
    await user.type(await screen.findByLabelText("Webhook name"), "orders");
    await user.click(screen.getByRole("button", { name: "Create webhook" }));
    const shown = await screen.findByRole("status", { name: /Copy its secret now/ });
    expect(within(shown).getByLabelText("The new webhook's secret")).toHaveValue("whsec_once");
    const example = within(shown).getByLabelText("Example request");
    expect(example).toHaveTextContent("SECRET='whsec_once'");
    expect(example).toHaveTextContent(`BODY='{"order_id":"","amount":2}'`);
    expect(example).toHaveTextContent("curl -X POST 'http://coach.test/api/hooks/h1'");
    expect(calls.find((c) => c.method === "POST")?.body).toEqual({ name: "orders", mapping: {} });
    await user.click(within(shown).getByRole("button", { name: "Done, hide it" }));
    expect(screen.queryByLabelText("The new webhook's secret")).not.toBeInTheDocument();
  });

  it("previews a cron expression, and says which field the server refused", async () => {
    stub([], [SCHEDULE]);
    const user = userEvent.setup();
    render(true);
    const row = (await screen.findByText("mornings")).closest("tr") as HTMLElement;
    expect(row).toHaveTextContent("At 09:00 on Monday through Friday");
    expect(within(row).getAllByRole("listitem")).toHaveLength(3);
    const cron = screen.getByLabelText("Cron expression");
    await user.clear(cron);
    await user.type(cron, "61 * * * *");
    expect(await screen.findByText(/cron: Bad minute/)).toBeInTheDocument();
    await user.clear(cron);
    await user.type(cron, "0 9 * * MON-FRI");
    expect(await screen.findByText(/At 09:00 on Monday through Friday \(UTC\); next:/)).toBeInTheDocument();
    await user.type(screen.getByLabelText("Schedule name"), "weekdays");
    await user.clear(screen.getByLabelText("Variables (JSON)"));
    await user.click(screen.getByRole("button", { name: "Create schedule" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("variables.order_id: is required");
  });

  it("lets operators read the triggers but not manage them", async () => {
    stub([HOOK], [SCHEDULE]);
    render(false);
    expect(await screen.findByText("mornings")).toBeInTheDocument();
    expect(await screen.findByText("shop")).toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "Create a webhook" })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Revoke|Disable|Delete/ })).not.toBeInTheDocument();
  });
});

describe("curlExample", () => {
  it("signs '<timestamp>.<body>' with the secret, as the server checks", () => {
    const text = curlExample("http://h/api/hooks/x", "whsec_a", exampleBody({ who: "world" }));
    expect(text).toContain(`BODY='{"who":"world"}'`);
    expect(text).toContain(`printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET"`);
    expect(text).toContain('-H "X-Coach-Signature: sha256=$SIG"');
  });

  it("puts each variable where the hook's mapping reads it", () => {
    const variables = { order_id: { type: "string", default: "A-1" }, amount: { type: "number", default: 9.5 } };
    expect(JSON.parse(exampleBody(variables, { order_id: "order.id", amount: "lines.0.total" }))).toEqual({
      order: { id: "A-1" }, lines: [{ total: 9.5 }],
    });
    expect(JSON.parse(exampleBody(variables, {}))).toEqual({ order_id: "A-1", amount: 9.5 });
  });
});
