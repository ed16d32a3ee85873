import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it } from "vitest";
import DashboardPage from "../dashboards/DashboardPage";
import { globalMetrics, learningWorkflow, operators, readyWorkflow, renderLive } from "../dashboards/testFixtures";
import { lastSocket } from "../test/fakeSocket";
import { errorResponse, jsonResponse, stubFetch } from "../test/utils";
import { DashboardNotices, mergeNotices } from "./DashboardNotices";
import { addLiveNotice, resetNoticeStore } from "./noticeStore";
import { NotificationsCenter } from "./NotificationsCenter";
import type { DashboardNotice } from "./types";

afterEach(() => resetNoticeStore());

const stepDemotion: DashboardNotice = {
  id: 21, kind: "step_demotion", at: "2026-11-24T09:00:00Z", actor: "lee@example.com", workflow_id: "wf-refund",
  workflow_name: "Refund request", step_id: "refund", reason: "step set to coaching by lee@example.com",
};
const ruleChange: DashboardNotice = {
  id: 30, kind: "learned_rule_change", at: "2026-11-24T10:00:00Z", actor: "system", workflow_id: "wf-refund",
  workflow_name: "Refund request", step_id: "refund", pack_id: "pack-1", cause: "disabled", started: [],
  stopped: [{ field: "currency", before: "EUR", after: "GBP" }],
};

function stubServer(notices: () => DashboardNotice[] | Response = () => [stepDemotion, ruleChange]) {
  return stubFetch((call) => {
    if (call.url === "/api/notices") {
      const answer = notices();
      return answer instanceof Response ? answer : jsonResponse({ items: answer });
    }
    if (call.url === "/api/metrics/workflows") return jsonResponse({ items: [readyWorkflow, learningWorkflow] });
    if (call.url === "/api/metrics/global") return jsonResponse(globalMetrics);
    if (call.url === "/api/metrics/operators") return jsonResponse({ items: operators });
    return errorResponse(404, "not_found", `unexpected ${call.method} ${call.url}`);
  });
}

const noticeItems = () => within(screen.getByRole("region", { name: "Notices" })).getAllByRole("listitem");
const titles = () => noticeItems().map((li) => li.querySelector(".site-notice__title")?.textContent);

describe("DashboardNotices", () => {
  it("shows the server's recent notices, newest first, with what happened, when, and a link", async () => {
    stubServer();
    renderLive(<DashboardNotices />, "/dashboard", "/dashboard");
    expect(await screen.findByRole("heading", { name: "Notices" })).toBeInTheDocument();
    expect(titles()).toEqual([
      "A learned rule stopped applying to step “refund” of “Refund request”",
      "Step “refund” of “Refund request” was demoted to coaching",
    ]);
    const [rule, demotion] = noticeItems();
    expect(rule).toHaveTextContent('No longer applies: currency: "EUR" → "GBP". The pack was disabled.');
    expect(within(rule).getByRole("link", { name: "Open the pack" })).toHaveAttribute("href", "/correction-packs?pack=pack-1");
    expect(demotion).toHaveTextContent("Step set to coaching by lee@example.com.");
    expect(within(demotion).getByRole("link", { name: "Open the workflow" })).toHaveAttribute("href", "/workflows/wf-refund");
    expect(within(demotion).getByText(/2026/).tagName).toBe("TIME");
    // history is shown, not announced
    expect(screen.getByTestId("notices-announcement")).toBeEmptyDOMElement();
  });

  it("dismisses a notice for good: focus goes to the next one, and it stays dismissed after a reload", async () => {
    stubServer();
    const first = renderLive(<DashboardNotices />, "/dashboard", "/dashboard");
    await screen.findByRole("heading", { name: "Notices" });
    await userEvent.click(screen.getByRole("button", { name: /^Dismiss: A learned rule stopped applying/ }));
    expect(titles()).toEqual(["Step “refund” of “Refund request” was demoted to coaching"]);
    expect(screen.getByRole("button", { name: /^Dismiss: Step “refund”/ })).toHaveFocus();

    first.unmount();
    resetNoticeStore(); // a reload
    renderLive(<DashboardNotices />, "/dashboard", "/dashboard");
    await screen.findByRole("heading", { name: "Notices" });
    expect(titles()).toEqual(["Step “refund” of “Refund request” was demoted to coaching"]);

    await userEvent.click(screen.getByRole("button", { name: /^Dismiss: Step “refund”/ }));
    expect(screen.queryByRole("region", { name: "Notices" })).not.toBeInTheDocument();
  });

  it("shows pushed notices even when the server's list cannot be read, and announces each once", async () => {
    stubServer(() => errorResponse(500, "internal", "down"));
    addLiveNotice("none", { ...stepDemotion, id: 40, workflow_name: undefined });
    const first = renderLive(<DashboardNotices workflows={[{ workflow_id: "wf-refund", name: "Refunds" }]} />, "/dashboard", "/dashboard");
    expect(await screen.findByText("Step “refund” of “Refunds” was demoted to coaching")).toBeInTheDocument();
    await waitFor(() =>
      expect(screen.getByTestId("notices-announcement")).toHaveTextContent(
        "Step “refund” of “Refunds” was demoted to coaching. Step set to coaching by lee@example.com.",
      ),
    );
    first.unmount(); // to another page and back: not announced again
    renderLive(<DashboardNotices />, "/dashboard", "/dashboard");
    expect(await screen.findByRole("heading", { name: "Notices" })).toBeInTheDocument();
    expect(screen.getByTestId("notices-announcement")).toBeEmptyDOMElement();
  });

  it("keeps one notice when it is both pushed and read back", () => {
    const pushed = { ...stepDemotion, workflow_name: undefined, at: "2026-11-24T09:00:01Z" };
    expect(mergeNotices([stepDemotion], [pushed, { ...ruleChange }])).toEqual([ruleChange, stepDemotion]);
  });
});

describe("DashboardPage with notices", () => {
  it("shows a demotion pushed while it is open as a notice, announced there and not twice", async () => {
    stubServer(() => []);
    renderLive(
      <>
        <NotificationsCenter />
        <DashboardPage />
      </>,
      "/dashboard",
      "/dashboard",
    );
    await screen.findByRole("link", { name: "Refund request" });
    act(() =>
      lastSocket().push("workflow_level_changed", {
        workflow_id: "wf-refund", level: "COACHING", previous_level: "AUTO", auto_ready: false, mode: "coaching",
        previous_mode: "auto", reason: "spot checks show acceptance below 85%", audit_seq: 55,
      }),
    );
    expect(await screen.findByText("“Refund request” was demoted to coaching")).toBeInTheDocument();
    const announced = screen.getByTestId("notices-announcement");
    await waitFor(() => expect(announced).toHaveTextContent("“Refund request” was demoted to coaching. Spot checks show acceptance below 85%."));
    // the dashboard's own live region says nothing of it
    const statuses = screen.getAllByRole("status").filter((s) => s !== announced);
    for (const status of statuses) expect(status).not.toHaveTextContent(/demoted|went from/);
  });
});
