"""The authorization matrix of docs/auth.md, checked route by route.

`EXPECTED` holds one row per (method, rule) of every `/api/` route: the lowest role allowed, or "public".
`test_every_api_route_has_a_row` walks `app.url_map`, so a new route without a row fails the suite: adding a
route forces a decision about who may call it.

Every row is then called by {nobody, operator, lead, admin} of the default workspace, on a row of their own
workspace and (for routes naming a row, in the path or in the body) on a row of workspace "other":
- nobody                      -> 401 `unauthorized` (public routes: never 401)
- a role below the minimum    -> 403 `forbidden`, whichever row it names (the role check comes first, so a
                                 refusal says nothing about the id)
- an allowed role, own row    -> the route's success status (fresh rows where the call consumes one)
- an allowed role, foreign row -> 404 `not_found`, exactly as for an id that does not exist (ids never leak)

Then the credentials themselves: CSRF on cookie writes, login failures and the limiter, revoked tokens, the token
list, X-Coach-Workspace, roles per workspace; and last, the audit chain of both workspaces still verifies.

The app and its rows are built once for the module, on SQLite (a copy of the session's migrated template).
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from config import Settings
from tests.conftest import make_user
from tests.support.push_service import new_browser

PASSWORD = "password-123"  # make_user's
ROLES = ("operator", "lead", "admin")
RANK = {"public": -1, "operator": 0, "lead": 1, "admin": 2}
CALLERS = (None, "operator", "lead", "admin")

# ---- the table: every /api route and method, and the lowest role that may call it ------------------------
# "operator" on the /api/auth routes means "any signed-in member" (operator is the lowest role there is).
EXPECTED: dict[tuple[str, str], str] = {
    # credentials (docs/auth.md "Credentials")
    ("POST", "/api/auth/login"): "public",
    ("POST", "/api/auth/logout"): "operator",
    ("GET", "/api/auth/me"): "operator",
    ("GET", "/api/auth/tokens"): "operator",
    ("POST", "/api/auth/tokens"): "operator",
    ("DELETE", "/api/auth/tokens/<token_id>"): "operator",
    # invitations to the caller (any signed-in user; someone else's invitation is a 404)
    ("GET", "/api/auth/invitations"): "operator",
    ("POST", "/api/auth/invitations/<invitation_id>/accept"): "operator",
    ("POST", "/api/auth/invitations/<invitation_id>/decline"): "operator",
    # the API's own documentation
    ("GET", "/api/openapi.json"): "public",
    ("GET", "/api/docs"): "public",
    ("GET", "/api/docs/assets/<path:filename>"): "public",
    # users and memberships: admins
    ("GET", "/api/users"): "admin",
    ("POST", "/api/users"): "admin",
    ("PUT", "/api/users/<user_id>/role"): "admin",
    ("DELETE", "/api/users/<user_id>"): "admin",
    ("POST", "/api/users/<user_id>/disable"): "admin",
    ("POST", "/api/users/<user_id>/enable"): "admin",
    ("DELETE", "/api/users/<user_id>/tokens"): "admin",
    ("GET", "/api/users/invitations"): "admin",
    ("DELETE", "/api/users/invitations/<invitation_id>"): "admin",
    # workflows: everyone reads; leads create, edit, delete, promote/demote (forcing: admin), set thresholds
    ("GET", "/api/workflows"): "operator",
    ("GET", "/api/workflows/templates"): "operator",
    ("GET", "/api/workflows/schema"): "operator",
    ("POST", "/api/workflows"): "lead",
    ("GET", "/api/workflows/<workflow_id>"): "operator",
    ("PUT", "/api/workflows/<workflow_id>"): "lead",
    ("DELETE", "/api/workflows/<workflow_id>"): "lead",
    ("POST", "/api/workflows/<workflow_id>/mode"): "lead",
    ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/mode"): "lead",
    ("PUT", "/api/workflows/<workflow_id>/thresholds"): "lead",
    # executions and coaching: operators start, cancel, answer, decide, pause and resume
    ("GET", "/api/executions/"): "operator",
    ("POST", "/api/executions/"): "operator",
    ("POST", "/api/executions/coaching"): "operator",
    ("GET", "/api/executions/<execution_id>"): "operator",
    ("POST", "/api/executions/<execution_id>/cancel"): "operator",
    ("POST", "/api/executions/<execution_id>/steps/<step_id>/answer"): "operator",
    ("GET", "/api/executions/<execution_id>/steps/<step_id>/transcript"): "operator",
    ("GET", "/api/executions/<execution_id>/coaching/suggestion"): "operator",
    ("POST", "/api/executions/<execution_id>/coaching/decision"): "operator",
    ("POST", "/api/executions/<execution_id>/coaching/undo"): "operator",
    ("GET", "/api/executions/<execution_id>/coaching/stats"): "operator",
    ("POST", "/api/executions/<execution_id>/coaching/pause"): "operator",
    ("POST", "/api/executions/<execution_id>/coaching/resume"): "operator",
    ("GET", "/api/coaching/queue"): "operator",
    ("GET", "/api/coaching/questions"): "operator",
    # interactive control, on workflow executions and plans alike: operators (as they decide and pause)
    ("POST", "/api/executions/<execution_id>/pause"): "operator",
    ("POST", "/api/executions/<execution_id>/apply-correction"): "operator",
    ("POST", "/api/executions/<execution_id>/resume"): "operator",
    ("GET", "/api/executions/<execution_id>/execution-state"): "operator",
    # recovery of a failed run: operators (as they pause, correct and resume); a re-run of a normal-mode execution
    # needs a lead, as starting one does (checked in the service: the matrix re-runs a coaching one). The history:
    # every member
    ("POST", "/api/executions/<execution_id>/retry"): "operator",
    ("POST", "/api/executions/<execution_id>/resume-from"): "operator",
    ("POST", "/api/executions/<execution_id>/rerun"): "operator",
    ("GET", "/api/executions/<execution_id>/history"): "operator",
    # plans: operators create, read and run them and approve those the policy allows (the service asks a lead for
    # the others); saving one as a workflow makes a workflow: leads
    ("GET", "/api/plans"): "operator",
    ("POST", "/api/plans"): "operator",
    ("GET", "/api/plans/<plan_id>"): "operator",
    ("POST", "/api/plans/<plan_id>/approve"): "operator",
    ("POST", "/api/plans/<plan_id>/execute"): "operator",
    ("GET", "/api/plans/<plan_id>/status"): "operator",
    ("POST", "/api/plans/<plan_id>/save-as-workflow"): "lead",
    ("POST", "/api/plans/<plan_id>/pause"): "operator",
    ("POST", "/api/plans/<plan_id>/apply-correction"): "operator",
    ("POST", "/api/plans/<plan_id>/resume"): "operator",
    ("GET", "/api/plans/<plan_id>/execution-state"): "operator",
    # approvals: everyone reads their workspace's; who may decide one is the approval's own rule (its approvers;
    # these approve any operator)
    ("GET", "/api/approvals"): "operator",
    ("GET", "/api/approvals/<approval_id>"): "operator",
    ("POST", "/api/approvals/<approval_id>"): "operator",
    ("POST", "/api/approvals/<approval_id>/undo"): "operator",
    # metrics: a workflow's own metrics for everyone; all metrics (global, per operator) for leads
    # (docs/design.md#concepts)
    ("GET", "/api/metrics/workflows"): "operator",
    ("GET", "/api/metrics/workflows/<workflow_id>"): "operator",
    ("GET", "/api/metrics/workflows/<workflow_id>/steps/<step_id>/decisions"): "operator",
    ("GET", "/api/metrics/workflows/<workflow_id>/decisions"): "operator",
    # each operator's time to decide and fast accepts (issue #41 item 6): leads, as per-operator metrics are
    ("GET", "/api/metrics/workflows/<workflow_id>/reviewers"): "lead",
    ("GET", "/api/metrics/global"): "lead",
    ("GET", "/api/metrics/operators"): "lead",
    ("GET", "/api/metrics/tools"): "lead",
    # correction packs: everyone reads; leads enable/disable, export and import (docs/design.md#concepts)
    ("GET", "/api/correction-packs"): "operator",
    ("GET", "/api/correction-packs/<pack_id>"): "operator",
    ("PATCH", "/api/correction-packs/<pack_id>"): "lead",
    ("GET", "/api/correction-packs/<pack_id>/export"): "lead",
    ("POST", "/api/correction-packs/<pack_id>/remove-change"): "lead",
    ("POST", "/api/correction-packs/import"): "lead",
    # the dashboard's notices (recent demotions and learned-rule changes, pushed to every member anyway): everyone
    ("GET", "/api/notices"): "operator",
    # the audit log: leads
    ("GET", "/api/audit"): "lead",
    ("GET", "/api/audit/verify"): "lead",
    ("GET", "/api/audit/actions"): "lead",
    # the workspace's outbound hosts: leads read, admins change
    ("GET", "/api/workspace/outbound"): "lead",
    ("PUT", "/api/workspace/outbound"): "admin",
    ("GET", "/api/workspace/undo"): "operator",
    ("PUT", "/api/workspace/undo"): "admin",
    # the floor of attentive reviews: every member reads it, leads set it
    ("GET", "/api/workspace/reviews"): "operator",
    ("PUT", "/api/workspace/reviews"): "lead",
    # the built-in tools the workspace's agents may call through /mcp: leads read, admins choose
    ("GET", "/api/workspace/gateway"): "lead",
    ("PUT", "/api/workspace/gateway"): "admin",
    ("GET", "/api/workspace/llm"): "admin",
    ("PUT", "/api/workspace/llm"): "admin",
    ("DELETE", "/api/workspace/llm"): "admin",
    ("POST", "/api/workspace/llm/test"): "admin",
    # Slack (docs/slack.md): admins set the app, each member their own Slack id; Slack's interactivity requests
    # are let in by Slack's signature alone ("signed": a Coach login is no substitute, 401 without it)
    ("GET", "/api/workspace/slack"): "admin",
    ("PUT", "/api/workspace/slack"): "admin",
    ("DELETE", "/api/workspace/slack"): "admin",
    ("POST", "/api/workspace/slack/test"): "admin",
    ("GET", "/api/workspace/slack/me"): "operator",
    ("PUT", "/api/workspace/slack/me"): "operator",
    ("POST", "/api/integrations/slack/<workspace_id>/interactions"): "signed",
    # policies: everyone reads the rules and the default; leads change them and dry-run (README "Policies")
    ("GET", "/api/policies"): "operator",
    ("POST", "/api/policies"): "lead",
    ("GET", "/api/policies/<id:policy_id>"): "operator",
    ("PUT", "/api/policies/<id:policy_id>"): "lead",
    ("DELETE", "/api/policies/<id:policy_id>"): "lead",
    ("GET", "/api/policies/default"): "operator",
    ("PUT", "/api/policies/default"): "lead",
    ("POST", "/api/policies/evaluate"): "lead",
    # MCP tool servers: admins; the tools the workspace can use: every member
    ("GET", "/api/tool-servers"): "admin",
    ("POST", "/api/tool-servers"): "admin",
    ("GET", "/api/tool-servers/<server_id>"): "admin",
    ("PUT", "/api/tool-servers/<server_id>"): "admin",
    ("DELETE", "/api/tool-servers/<server_id>"): "admin",
    ("POST", "/api/tool-servers/<server_id>/refresh"): "admin",
    ("GET", "/api/tools"): "operator",
    # the MCP gateway's agent identities: admins
    ("GET", "/api/agents"): "admin",
    ("POST", "/api/agents"): "admin",
    ("DELETE", "/api/agents/<agent_id>"): "admin",
    # a workflow's triggers (docs/triggers.md): everyone reads them, leads manage them; a delivery to a hook is
    # public (its signature is the auth: the matrix signs it)
    ("GET", "/api/workflows/<workflow_id>/hooks"): "operator",
    ("POST", "/api/workflows/<workflow_id>/hooks"): "lead",
    ("DELETE", "/api/workflows/<workflow_id>/hooks/<hook_id>"): "lead",
    ("GET", "/api/workflows/<workflow_id>/schedules"): "operator",
    ("POST", "/api/workflows/<workflow_id>/schedules"): "lead",
    ("GET", "/api/workflows/<workflow_id>/schedules/preview"): "operator",
    ("PATCH", "/api/workflows/<workflow_id>/schedules/<schedule_id>"): "lead",
    ("DELETE", "/api/workflows/<workflow_id>/schedules/<schedule_id>"): "lead",
    ("POST", "/api/hooks/<hook_id>"): "public",
    # notifications (docs/notifications.md): each member their own settings; admins the workspace's routes, webhooks
    ("GET", "/api/notifications/settings"): "operator",
    ("PUT", "/api/notifications/settings"): "operator",
    ("GET", "/api/notifications/routes"): "admin",
    ("POST", "/api/notifications/routes"): "admin",
    ("PUT", "/api/notifications/routes/<route_id>"): "admin",
    ("DELETE", "/api/notifications/routes/<route_id>"): "admin",
    ("GET", "/api/notifications/webhooks"): "admin",
    ("POST", "/api/notifications/webhooks"): "admin",
    ("PUT", "/api/notifications/webhooks/<endpoint_id>"): "admin",
    ("DELETE", "/api/notifications/webhooks/<endpoint_id>"): "admin",
    # Web Push: the public key, and each member their own browsers' subscriptions
    ("GET", "/api/notifications/push/key"): "operator",
    ("GET", "/api/notifications/push/subscriptions"): "operator",
    ("POST", "/api/notifications/push/subscriptions"): "operator",
    ("DELETE", "/api/notifications/push/subscriptions"): "operator",
    # learning per gateway tool: leads (forcing a promotion: admins)
    ("GET", "/api/gateway/tools"): "lead",
    ("POST", "/api/gateway/tools/<tool>/mode"): "lead",
    ("PATCH", "/api/gateway/tools/<tool>/pack"): "lead",
    # counterfactual replays and proposed regions (docs/autonomy.md "Proposals and replay"): leads, read-only
    ("GET", "/api/workflows/<workflow_id>/steps/<step_id>/proposals"): "lead",
    ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/replay"): "lead",
    ("GET", "/api/gateway/tools/<tool>/proposals"): "lead",
    ("POST", "/api/gateway/tools/<tool>/replay"): "lead",
    ("POST", "/api/policies/replay"): "lead",
    # regions (docs/autonomy.md#regions): leads; a forced promotion admins (not asked here)
    ("GET", "/api/workflows/<workflow_id>/steps/<step_id>/regions"): "lead",
    ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/regions"): "lead",
    ("GET", "/api/gateway/tools/<tool>/regions"): "lead",
    ("POST", "/api/gateway/tools/<tool>/regions"): "lead",
    ("GET", "/api/regions/<region_id>"): "lead",
    ("PATCH", "/api/regions/<region_id>"): "lead",
    ("DELETE", "/api/regions/<region_id>"): "lead",
    ("POST", "/api/regions/<region_id>/mode"): "lead",
}

# Routes that name a row in their body instead of their path: they get a foreign-row case too.
FOREIGN_IN_BODY = {
    ("POST", "/api/executions/"),
    ("POST", "/api/executions/coaching"),
    ("POST", "/api/correction-packs/import"),
}
# Path variables that are not ids of a workspace's row.
NOT_ROWS = {"step_id", "filename", "workspace_id"}
SUCCESS = {"POST": 200, "GET": 200, "PUT": 200, "PATCH": 200, "DELETE": 204}
CREATED = {
    ("POST", "/api/workflows/<workflow_id>/hooks"),
    ("POST", "/api/workflows/<workflow_id>/schedules"),
    ("POST", "/api/hooks/<hook_id>"),
    ("POST", "/api/executions/<execution_id>/rerun"),
    ("POST", "/api/tool-servers"),
    ("POST", "/api/agents"),
    ("POST", "/api/plans"),
    ("POST", "/api/plans/<plan_id>/save-as-workflow"),
    ("POST", "/api/workflows"),
    ("POST", "/api/executions/"),
    ("POST", "/api/executions/coaching"),
    ("POST", "/api/auth/tokens"),
    ("POST", "/api/correction-packs/import"),
    ("POST", "/api/policies"),
    ("POST", "/api/notifications/routes"),
    ("POST", "/api/notifications/webhooks"),
    ("POST", "/api/notifications/push/subscriptions"),
    ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/regions"),
    ("POST", "/api/gateway/tools/<tool>/regions"),
}
ACCEPTED = {("POST", "/api/users")}  # an invitation, answered the same whether or not the email has an account
NO_CONTENT = {("POST", "/api/auth/logout"), ("POST", "/api/auth/invitations/<invitation_id>/decline")}
# an undo with no decision held (tests/api/test_undo.py holds one): the role got through to the row, which has
# nothing to take back
NOTHING_TO_UNDO = {
    ("POST", "/api/executions/<execution_id>/coaching/undo"),
    ("POST", "/api/approvals/<approval_id>/undo"),
}

# an http server nobody listens at (port 9, discard): a refresh answers 200 with the reason in `last_error`
TOOL_SERVER = {"name": "remote", "transport": "http", "url": "http://127.0.0.1:9/mcp", "bearer_token": "t"}
POLICY = {"name": "matrix rule", "order": 1, "effect": "require_review", "match": {"tool": "sql.*", "sql": "not_read"}}
REGION = {"name": "matrix region", "when": "params.to == 'a@x'"}
MAIL_STEP = {"id": "mail", "tool": "echo", "params": {"to": "a@x", "cc": "none"}}
DEFINITION = {"name": "matrix", "steps": [MAIL_STEP]}
ASK_DEFINITION = {"name": "ask", "steps": [{"id": "ask", "type": "human_input", "question": "Proceed?"}]}
PLAN = {
    "steps": [
        {"id": "step_1", "tool": "echo", "params": {"message": "hi"}},
        {"id": "step_2", "tool": "echo", "params": {"message": "there"}},
    ]
}
# a run that fails at its validation step `check`, before `after`
FAILING_DEFINITION = {
    "name": "failing",
    "steps": [
        {"id": "check", "type": "validation", "condition": "false"},
        {"id": "after", "tool": "echo", "params": {"message": "x"}, "depends_on": []},
    ],
}
ROUTE = {"name": "matrix route", "events": ["approval_requested"], "users": ["lead@authz.test"]}
WEBHOOK = {"name": "matrix hook", "url": "http://8.8.8.8:9/hook", "events": ["run_failed"]}  # public, never reached
APPROVAL_DEFINITION = {
    "name": "approve",
    "steps": [{"id": "sign_off", "type": "approval", "message": "Go?", "approvers": {"roles": ["operator"]}}],
}


def _variables(rule: str) -> list[str]:
    return re.findall(r"<(?:[^:<>]+:)?([^<>]+)>", rule)


def _has_foreign_case(key: tuple[str, str]) -> bool:
    return key in FOREIGN_IN_BODY or any(v not in NOT_ROWS for v in _variables(key[1]))


# ---- the world: one app, two workspaces, their rows ---------------------------------------------------------
@dataclass
class World:
    app: Any
    tokens: dict[str, str]  # role in the default workspace (and "other": the other admin) -> token
    emails: dict[str, str]
    rows: dict[str, dict[str, str]]  # "own" / "foreign" -> name -> id
    default_ws: str = ""
    other_ws: str = ""
    seq: Callable[[], int] = field(default_factory=lambda: itertools.count(1).__next__)
    matrix_cases_run: int = 0

    @property
    def services(self):
        return self.app.extensions["coach"]

    def call(self, method: str, path: str, caller: str | None, json=None, headers=None, **kwargs):
        headers = dict(headers or {})
        if caller is not None:
            headers["Authorization"] = f"Bearer {self.tokens[caller]}"
        return self.app.test_client().open(path, method=method, json=json, headers=headers, **kwargs)

    def ok(self, method: str, path: str, caller: str, json=None, status: int = 200) -> Any:
        response = self.call(method, path, caller, json)
        assert response.status_code == status, f"{method} {path} -> {response.status_code}: {response.get_json()}"
        return response.get_json(silent=True)

    def admin_of(self, side: str) -> str:
        return "admin" if side == "own" else "other"

    # rows (made by the admin of the side's workspace)
    def workflow(self, side: str, definition: dict = DEFINITION) -> str:
        return self.ok(
            "POST",
            "/api/workflows",
            self.admin_of(side),
            {**definition, "name": f"{definition['name']} {self.seq()}"},
            status=201,
        )["id"]

    def settle(self, side: str, execution_id: str) -> dict:
        deadline = time.monotonic() + 30
        while True:
            self.services.runner.wait_idle(5)
            body = self.ok("GET", f"/api/executions/{execution_id}", self.admin_of(side))
            if body["status"] not in ("pending", "running", "resumed") or time.monotonic() > deadline:
                return body
            time.sleep(0.01)

    def coaching(self, side: str, workflow_id: str | None = None, settle: bool = True) -> tuple[str, str | None]:
        """A coaching execution; settled, it waits with a pending suggestion: (execution id, suggestion id)."""
        ex_id = self.ok(
            "POST",
            "/api/executions/coaching",
            self.admin_of(side),
            {"workflow_id": workflow_id or self.rows[side]["workflow_id"]},
            status=201,
        )["execution_id"]
        if not settle:
            return ex_id, None
        assert self.settle(side, ex_id)["status"] == "waiting_decision"
        sug = self.ok("GET", f"/api/executions/{ex_id}/coaching/suggestion", self.admin_of(side))["suggestion"]
        return ex_id, sug["suggestion_id"]

    def asking(self, side: str) -> str:
        """An execution waiting at its human_input step `ask`."""
        ex_id = self.ok(
            "POST",
            "/api/executions/",
            self.admin_of(side),
            {"workflow_id": self.rows[side]["ask_workflow_id"]},
            status=201,
        )["execution_id"]
        assert self.settle(side, ex_id)["status"] != "completed"
        return ex_id

    def failed(self, side: str) -> str:
        """A normal-mode execution that failed at its step `check`: its id."""
        ex_id = self.ok(
            "POST",
            "/api/executions/",
            self.admin_of(side),
            {"workflow_id": self.workflow(side, FAILING_DEFINITION), "mode": "normal"},
            status=201,
        )["execution_id"]
        assert self.settle(side, ex_id)["status"] == "failed"
        return ex_id

    def approval(self, side: str) -> str:
        """A pending approval (of an execution waiting at its approval step): its id."""
        ex_id = self.ok(
            "POST",
            "/api/executions/",
            self.admin_of(side),
            {"workflow_id": self.rows[side]["approval_workflow_id"]},
            status=201,
        )["execution_id"]
        ex = self.settle(side, ex_id)
        assert ex["status"] == "waiting_approval", ex
        return ex["gate"]["approval_id"]

    def plan(self, side: str, status: str = "draft") -> str:
        """A plan of `side`: a draft, approved, or executed and paused before its step_2 (`paused`)."""
        admin = self.admin_of(side)
        plan_id = self.ok("POST", "/api/plans", admin, PLAN, status=201)["plan_id"]
        if status == "paused":
            self.ok("POST", f"/api/plans/{plan_id}/pause", admin, {"step_id": "step_2", "question": "Go?"})
        if status in ("approved", "paused"):
            self.ok("POST", f"/api/plans/{plan_id}/approve", admin)
        if status == "paused":
            self.ok("POST", f"/api/plans/{plan_id}/execute", admin, {})
            assert self.settle(side, plan_id)["status"] == "waiting_clarification"
        return plan_id

    def tool_server(self, side: str) -> str:
        return self.ok(
            "POST", "/api/tool-servers", self.admin_of(side), {**TOOL_SERVER, "name": f"remote{self.seq()}"}, status=201
        )["id"]

    def route(self, side: str) -> str:
        admin = self.admin_of(side)  # a route's users are members of its workspace
        return self.ok(
            "POST", "/api/notifications/routes", admin, {**ROUTE, "users": [self.emails[admin]]}, status=201
        )["id"]

    def webhook(self, side: str) -> str:
        return self.ok("POST", "/api/notifications/webhooks", self.admin_of(side), WEBHOOK, status=201)["id"]

    def agent(self, side: str) -> str:
        return self.ok("POST", "/api/agents", self.admin_of(side), {"name": f"agent{self.seq()}"}, status=201)["id"]

    def schedule(self, side: str) -> str:
        return self.ok(
            "POST",
            f"/api/workflows/{self.rows[side]['workflow_id']}/schedules",
            self.admin_of(side),
            {"name": f"s{self.seq()}", "cron": "0 9 * * *"},
            status=201,
        )["id"]

    def region(self, side: str) -> str:
        return self.ok(
            "POST",
            f"/api/workflows/{self.rows[side]['workflow_id']}/steps/mail/regions",
            self.admin_of(side),
            REGION,
            status=201,
        )["id"]

    def gateway_tool(self, side: str) -> str:
        """A gateway tool `side`'s workspace knows (a mode row of its own: no MCP server needed)."""
        from services.models.gateway import GatewayCorrectionPack, GatewayToolMode

        name, ws = f"{side}{self.seq()}.tool", self.default_ws if side == "own" else self.other_ws
        with self.services.db.transaction() as session:  # a mode row and a correction pack
            session.add(GatewayToolMode(workspace_id=ws, tool=name, agent="", mode="coaching"))
            session.add(GatewayCorrectionPack(workspace_id=ws, tool=name, enabled=False, stats={}))
        return name

    def token_of(self, caller: str) -> str:
        return self.ok("POST", "/api/auth/tokens", caller, {"name": f"to revoke {self.seq()}"}, status=201)["id"]

    def invitation_for(self, email: str, workspace_slug: str | None = None) -> str:
        """A pending invitation of `email` (to a fresh workspace unless one is named): its id."""
        from services import workspaces
        from services.models.users import Workspace
        from services.users import members
        from services.users import service as users

        with self.services.db.transaction() as session:
            ws = (
                users.find_workspace(session, workspace_slug)
                if workspace_slug
                else workspaces.create(session, f"inv-{self.seq()}")
            )
            return members.invite(session, session.get(Workspace, ws.id), email, "operator", "matrix").id

    def member(self) -> str:
        """A fresh operator of the default workspace: their id."""
        email = f"member{self.seq()}@authz.test"
        make_user(self.services, email, "operator")
        return next(u["id"] for u in self.ok("GET", "/api/users", "admin")["items"] if u["email"] == email)


def _populate(w: World, side: str) -> dict[str, str]:
    admin = w.admin_of(side)
    rows: dict[str, str] = {}
    w.rows[side] = rows
    rows["workflow_id"] = w.workflow(side)
    rows["ask_workflow_id"] = w.workflow(side, ASK_DEFINITION)
    rows["approval_workflow_id"] = w.workflow(side, APPROVAL_DEFINITION)
    rows["approval_id"] = w.approval(side)
    # a correction pack of three corrections on the workflow's step `mail`
    for _ in range(3):
        ex_id, sug_id = w.coaching(side)
        w.ok(
            "POST",
            f"/api/executions/{ex_id}/coaching/decision",
            admin,
            {"suggestion_id": sug_id, "decision": "correct", "correction": {"to": "b@x", "cc": "none"}},
        )
        assert w.settle(side, ex_id)["status"] == "completed"
    packs = w.ok("GET", f"/api/correction-packs?workflow_id={rows['workflow_id']}", admin)["items"]
    assert len(packs) == 1 and packs[0]["corrections"] == 3, packs
    rows["pack_id"] = packs[0]["id"]
    # a coaching execution waiting for a decision, and one waiting for an answer
    rows["execution_id"], rows["suggestion_id"] = w.coaching(side)
    rows["ask_execution_id"] = w.asking(side)
    rows["export"] = w.ok("GET", f"/api/correction-packs/{rows['pack_id']}/export", admin)
    rows["policy_id"] = w.ok("POST", "/api/policies", admin, POLICY, status=201)["id"]
    rows["plan_id"] = w.plan(side, "paused")
    rows["server_id"] = w.tool_server(side)
    rows["agent_id"] = w.agent(side)
    hook = w.ok("POST", f"/api/workflows/{rows['workflow_id']}/hooks", admin, {"name": "matrix"}, status=201)
    rows["hook_id"], rows["hook_secret"] = hook["id"], hook["secret"]
    rows["schedule_id"] = w.schedule(side)
    rows["route_id"] = w.route(side)
    rows["endpoint_id"] = w.webhook(side)
    rows["tool"] = w.gateway_tool(side)
    rows["region_id"] = w.region(side)
    return rows


@pytest.fixture(scope="module")
def world(sqlite_template, tmp_path_factory):
    from api.app import create_app

    folder = tmp_path_factory.mktemp("authz")
    shutil.copy(sqlite_template, folder / "coach.db")
    (folder / "data").mkdir()
    settings = Settings(
        env="test",
        database_url=f"sqlite:///{folder / 'coach.db'}",
        instance_dir=str(folder),
        data_dir=str(folder / "data"),
        demo=False,
        runner_workers=2,
        shell_allow=("echo", "sleep"),
        log_level="WARNING",
        secret_key="test-secret",
        random_seed=7,
        async_mode="threading",
    )
    app = create_app(settings, migrate=False)
    app.config["TESTING"] = True
    services = app.extensions["coach"]
    emails = {role: f"{role}@authz.test" for role in ROLES}
    emails["other"] = "admin@other.test"
    tokens = {role: make_user(services, emails[role], role) for role in ROLES}
    tokens["other"] = make_user(services, emails["other"], "admin", "other")
    w = World(app=app, tokens=tokens, emails=emails, rows={})
    w.default_ws = w.ok("GET", "/api/auth/me", "admin")["workspace_id"]
    w.other_ws = w.ok("GET", "/api/auth/me", "other")["workspace_id"]
    assert w.default_ws != w.other_ws
    own, foreign = _populate(w, "own"), _populate(w, "foreign")
    # users: a plain member of the default workspace (own), the other workspace's admin (foreign)
    make_user(services, "member@authz.test", "operator")
    own["user_id"] = next(
        u["id"] for u in w.ok("GET", "/api/users", "admin")["items"] if u["email"] == "member@authz.test"
    )
    foreign["user_id"] = w.ok("GET", "/api/auth/me", "other")["user"]["id"]
    # tokens: the other admin's (foreign); an own-row case revokes a fresh token of the caller's own
    foreign["token_id"] = w.token_of("other")
    # invitations: one of each workspace, for people who are not the callers
    own["invitation_id"] = w.invitation_for("invited@authz.test", "default")
    foreign["invitation_id"] = w.invitation_for("invited@other.test", "other")
    yield w
    services.runner.wait_idle(5)
    services.close()


def push_subscription(n: int) -> dict:
    """A browser's PushSubscription (its keys real; its push service public but never reached, as WEBHOOK's)."""
    return new_browser(f"https://8.8.8.8:9/push/matrix{n}", "").subscription()  # public, like WEBHOOK


# ---- how each route is called ------------------------------------------------------------------------------
@dataclass
class Request:
    path: dict[str, str] = field(default_factory=dict)  # path variables not taken from the side's rows
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    query: str = ""


def _build(w: World, key: tuple[str, str], side: str, caller: str | None, fresh: bool) -> Request:
    """The request for `key` on a row of `side`. `fresh`: the call will succeed and consume its row, so it gets
    one of its own (a too-low role or nobody gets the shared rows: they never reach them)."""
    rows = w.rows[side]
    method, rule = key
    email = w.emails[caller] if caller else w.emails["admin"]
    if key == ("POST", "/api/auth/login"):
        return Request(json={"email": email, "password": PASSWORD})
    if key == ("POST", "/api/auth/tokens"):
        return Request(json={"name": "matrix"})
    if key == ("DELETE", "/api/auth/tokens/<token_id>"):
        return Request({"token_id": w.token_of(caller) if fresh else w.rows["foreign"]["token_id"]})
    if key == ("POST", "/api/users"):
        return Request(json={"email": f"new{w.seq()}@authz.test", "password": PASSWORD, "role": "operator"})
    if key == ("PUT", "/api/users/<user_id>/role"):
        return Request(json={"role": "operator"})
    if (
        key
        in {
            ("DELETE", "/api/users/<user_id>"),
            ("POST", "/api/users/<user_id>/disable"),
            ("POST", "/api/users/<user_id>/enable"),
            ("DELETE", "/api/users/<user_id>/tokens"),
        }
        and fresh
    ):
        return Request({"user_id": w.member()})
    if (
        key
        in {
            ("POST", "/api/auth/invitations/<invitation_id>/accept"),
            ("POST", "/api/auth/invitations/<invitation_id>/decline"),
        }
        and fresh
    ):
        return Request({"invitation_id": w.invitation_for(email)})
    if key == ("DELETE", "/api/users/invitations/<invitation_id>") and fresh:
        return Request({"invitation_id": w.invitation_for(f"cancel{w.seq()}@authz.test", "default")})
    if key in {("POST", "/api/workflows"), ("PUT", "/api/workflows/<workflow_id>")}:
        return Request(json={**DEFINITION, "name": f"matrix {w.seq()}"})
    if key == ("DELETE", "/api/workflows/<workflow_id>") and fresh:
        return Request({"workflow_id": w.workflow(side)})
    if key == ("POST", "/api/workflows/<workflow_id>/mode"):
        return Request(json={"mode": "coaching"})
    if key == ("PUT", "/api/workflows/<workflow_id>/thresholds"):
        return Request(json={})
    if key == ("POST", "/api/executions/"):
        return Request(json={"workflow_id": rows["workflow_id"], "variables": {}})  # the workflow's mode
    if key == ("POST", "/api/executions/coaching"):
        return Request(json={"workflow_id": rows["workflow_id"], "variables": {}})
    if key == ("POST", "/api/executions/<execution_id>/cancel") and fresh:
        return Request({"execution_id": w.coaching(side, settle=False)[0]})
    if key == ("POST", "/api/executions/<execution_id>/steps/<step_id>/answer"):
        return Request(
            {"execution_id": w.asking(side) if fresh else rows["ask_execution_id"], "step_id": "ask"},
            json={"answer": "yes"},
        )
    if key == ("POST", "/api/executions/<execution_id>/coaching/decision"):
        ex_id, sug_id = w.coaching(side) if fresh else (rows["execution_id"], rows["suggestion_id"])
        return Request({"execution_id": ex_id}, json={"suggestion_id": sug_id, "decision": "accept"})
    if key == ("POST", "/api/executions/<execution_id>/coaching/pause") and fresh:
        return Request({"execution_id": w.coaching(side)[0]})
    if key == ("POST", "/api/executions/<execution_id>/coaching/resume") and fresh:
        ex_id = w.coaching(side)[0]
        w.ok("POST", f"/api/executions/{ex_id}/coaching/pause", w.admin_of(side))
        return Request({"execution_id": ex_id})
    if key == ("POST", "/api/executions/<execution_id>/retry"):
        return Request({"execution_id": w.failed(side)} if fresh else {}, json={"step_id": "check"})
    if key == ("POST", "/api/executions/<execution_id>/resume-from"):
        return Request({"execution_id": w.failed(side)} if fresh else {}, json={"step_id": "after"})
    if key == ("POST", "/api/executions/<execution_id>/rerun") and fresh:
        ex_id = w.coaching(side, settle=False)[0]  # a coaching run, cancelled: an operator may re-run it
        w.ok("POST", f"/api/executions/{ex_id}/cancel", w.admin_of(side))
        return Request({"execution_id": ex_id})
    if key == ("GET", "/api/executions/<execution_id>/steps/<step_id>/transcript"):
        return Request({"step_id": "mail"})  # a step that is not an agent's: an empty conversation
    if key == ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/mode"):
        return Request({"step_id": "mail"}, json={"mode": "always_review"})
    if key == ("POST", "/api/approvals/<approval_id>"):
        return Request(
            {"approval_id": w.approval(side) if fresh else rows["approval_id"]}, json={"decision": "approve"}
        )
    if key == ("PUT", "/api/workspace/outbound"):
        return Request(json={"allow": [], "deny": ["blocked.example"]})
    if key == ("PUT", "/api/workspace/undo"):
        return Request(json={"window_s": 0})
    if key == ("PUT", "/api/workspace/reviews"):
        return Request(json={"attentive_floor_ms": 2000})
    if key == ("PUT", "/api/workspace/gateway"):
        return Request(json={"builtin_tools": ["echo"]})
    if key == ("POST", "/api/executions/<execution_id>/coaching/undo"):
        return Request({"execution_id": rows["execution_id"]}, json={"suggestion_id": rows["suggestion_id"]})
    if key == ("PUT", "/api/workspace/slack"):
        return Request(json={"default_channel": "C0MATRIX"})
    if key == ("PUT", "/api/workspace/slack/me"):
        return Request(json={"slack_user_id": f"U0{caller or 'NOBODY'}".upper()})
    if key == ("POST", "/api/integrations/slack/<workspace_id>/interactions"):
        return Request({"workspace_id": w.default_ws}, json={"payload": "{}"})
    if key == ("PUT", "/api/workspace/llm"):  # a public address (no DNS); nothing connects to it here
        return Request(json={"base_url": "http://8.8.8.8:9/v1", "model": "m", "api_key": "k"})
    if key == ("POST", "/api/workspace/llm/test") and fresh:  # no provider: answered at once, ok false
        w.ok("DELETE", "/api/workspace/llm", "admin", status=204)
        return Request()
    if key == ("PATCH", "/api/correction-packs/<pack_id>"):
        return Request(json={"enabled": True})
    if key == ("POST", "/api/correction-packs/<pack_id>/remove-change"):
        if fresh:  # the export puts the change back (a removal consumes it)
            w.ok("POST", "/api/correction-packs/import", w.admin_of(side), rows["export"], status=201)
        return Request(json={"field": "to", "before": "a@x", "after": "b@x"})
    if key == ("GET", "/api/metrics/workflows/<workflow_id>/steps/<step_id>/decisions"):
        return Request({"step_id": "mail"})
    if key == ("POST", "/api/correction-packs/import"):
        return Request(json=rows["export"])
    if key in {("POST", "/api/policies"), ("PUT", "/api/policies/<id:policy_id>")}:
        return Request(json=POLICY)
    if key == ("DELETE", "/api/policies/<id:policy_id>") and fresh:
        return Request({"policy_id": w.ok("POST", "/api/policies", w.admin_of(side), POLICY, status=201)["id"]})
    if key == ("PUT", "/api/policies/default"):
        return Request(json={"destructive": "require_review"})
    if key in {("POST", "/api/tool-servers"), ("PUT", "/api/tool-servers/<server_id>")}:
        return Request(json={**TOOL_SERVER, "name": f"remote{w.seq()}"})
    if key == ("POST", "/api/agents"):
        return Request(json={"name": f"agent{w.seq()}"})
    if key == ("PUT", "/api/notifications/settings"):
        return Request(json={"email": True, "quiet_start": "22:00", "quiet_end": "07:00", "timezone": "UTC"})
    if key in {("POST", "/api/notifications/routes"), ("PUT", "/api/notifications/routes/<route_id>")}:
        return Request(json=ROUTE)
    if key in {("POST", "/api/notifications/webhooks"), ("PUT", "/api/notifications/webhooks/<endpoint_id>")}:
        return Request(json=WEBHOOK)
    if key == ("DELETE", "/api/notifications/routes/<route_id>") and fresh:
        return Request({"route_id": w.route(side)})
    if key == ("DELETE", "/api/notifications/webhooks/<endpoint_id>") and fresh:
        return Request({"endpoint_id": w.webhook(side)})
    if key == ("POST", "/api/notifications/push/subscriptions"):
        return Request(json=push_subscription(w.seq()))
    if key == ("DELETE", "/api/notifications/push/subscriptions"):
        made = push_subscription(w.seq())
        if fresh:
            w.ok("POST", "/api/notifications/push/subscriptions", caller, made, status=201)
        return Request(json={"endpoint": made["endpoint"]})
    if key == ("POST", "/api/gateway/tools/<tool>/mode"):
        return Request(json={"mode": "coaching"})
    if key == ("PATCH", "/api/gateway/tools/<tool>/pack"):
        return Request(json={"enabled": True})
    if key == ("DELETE", "/api/agents/<agent_id>") and fresh:
        return Request({"agent_id": w.agent(side)})
    if key == ("DELETE", "/api/tool-servers/<server_id>") and fresh:
        return Request({"server_id": w.tool_server(side)})
    if key == ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/replay"):
        return Request({"step_id": "mail"}, json={"when": "params.message == 'hi'"})
    if key == ("GET", "/api/workflows/<workflow_id>/steps/<step_id>/proposals"):
        return Request({"step_id": "mail"})
    if key == ("POST", "/api/gateway/tools/<tool>/replay"):
        return Request(json={"when": "params.message == 'hi'"})
    if key == ("POST", "/api/policies/replay"):
        return Request(json={"rule": POLICY})
    if key in {
        ("GET", "/api/workflows/<workflow_id>/steps/<step_id>/regions"),
        ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/regions"),
    }:
        return Request({"step_id": "mail"}, json=REGION if key[0] == "POST" else None)
    if key == ("POST", "/api/gateway/tools/<tool>/regions"):
        return Request(json={**REGION, "when": "params.message == 'hi'"})
    if key == ("PATCH", "/api/regions/<region_id>"):
        return Request(json={"name": "renamed region"})
    if key == ("DELETE", "/api/regions/<region_id>") and fresh:
        return Request({"region_id": w.region(side)})
    if key == ("POST", "/api/regions/<region_id>/mode"):
        return Request(json={"mode": "coaching"})
    if key == ("POST", "/api/policies/evaluate"):
        return Request(json={"tool": "sql.query", "params": {"query": "DELETE FROM t"}})
    if key in {("POST", "/api/plans/<plan_id>/pause"), ("POST", "/api/executions/<execution_id>/pause")}:
        if key[1].startswith("/api/plans"):
            return Request({"plan_id": w.plan(side)} if fresh else {}, json={"step_id": "step_2"})
        return Request({"execution_id": w.coaching(side)[0]} if fresh else {}, json={"step_id": "mail"})
    if key in {
        ("POST", "/api/plans/<plan_id>/apply-correction"),
        ("POST", "/api/executions/<execution_id>/apply-correction"),
    }:
        correction = {"updated_step": {"params": {"message": "corrected"}}}
        if key[1].startswith("/api/plans"):
            return Request(
                {"plan_id": w.plan(side)} if fresh else {}, json={"step_id": "step_2", "correction": correction}
            )
        # a plan's execution is an execution: its step_2 has not run
        return Request(
            {"execution_id": w.plan(side) if fresh else rows["plan_id"]},
            json={"step_id": "step_2", "correction": correction},
        )
    if key in {("POST", "/api/plans/<plan_id>/resume"), ("POST", "/api/executions/<execution_id>/resume")}:
        name = "plan_id" if key[1].startswith("/api/plans") else "execution_id"
        return Request({name: w.plan(side, "paused") if fresh else rows["plan_id"]}, json={"feedback": "go"})
    if key == ("GET", "/api/executions/<execution_id>/execution-state"):
        return Request({"execution_id": rows["plan_id"]})
    if key == ("POST", "/api/plans"):
        return Request(json=PLAN)
    if key == ("POST", "/api/plans/<plan_id>/approve"):
        return Request({"plan_id": w.plan(side)} if fresh else {})
    if key == ("POST", "/api/plans/<plan_id>/execute"):
        return Request({"plan_id": w.plan(side, "approved")} if fresh else {}, json={})
    if key == ("POST", "/api/plans/<plan_id>/save-as-workflow"):
        return Request(json={"name": f"saved {w.seq()}"})
    if key == ("GET", "/api/docs/assets/<path:filename>"):
        return Request({"filename": "swagger-ui.css"})
    if key == ("GET", "/api/workflows/<workflow_id>/schedules/preview"):
        return Request(query="?cron=0+9+*+*+MON-FRI&timezone=Europe/Berlin")
    if key == ("POST", "/api/workflows/<workflow_id>/hooks"):
        return Request(json={"name": f"hook {w.seq()}"})
    if key in {
        ("POST", "/api/workflows/<workflow_id>/schedules"),
        ("PATCH", "/api/workflows/<workflow_id>/schedules/<schedule_id>"),
    }:
        return Request(json={"name": f"s{w.seq()}", "cron": "*/5 * * * *", "timezone": "Europe/Berlin"})
    if key == ("DELETE", "/api/workflows/<workflow_id>/hooks/<hook_id>") and fresh:
        return Request(
            {
                "hook_id": w.ok(
                    "POST",
                    f"/api/workflows/{rows['workflow_id']}/hooks",
                    w.admin_of(side),
                    {"name": f"hook {w.seq()}"},
                    status=201,
                )["id"]
            }
        )
    if key == ("DELETE", "/api/workflows/<workflow_id>/schedules/<schedule_id>") and fresh:
        return Request({"schedule_id": w.schedule(side)})
    if key == ("POST", "/api/hooks/<hook_id>"):  # signed with the hook's secret, as its sender would
        from core import triggers

        stamp = str(int(time.time()))
        return Request(
            json={},
            headers={
                triggers.TIMESTAMP_HEADER: stamp,
                triggers.DELIVERY_HEADER: uuid.uuid4().hex,
                triggers.SIGNATURE_HEADER: triggers.sign(rows["hook_secret"], stamp, b"{}"),
            },
        )
    return Request()


def _path(w: World, rule: str, side: str, given: dict[str, str]) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1)
        return given[name] if name in given else w.rows[side][name]

    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", value, rule)


def _missing(request: Request, key: tuple[str, str]) -> Request:
    """The same request naming rows that exist nowhere."""
    made_up = lambda: str(uuid.uuid4())  # noqa: E731
    path = {name: (value if name in NOT_ROWS else made_up()) for name, value in request.path.items()}
    json = request.json
    if key in FOREIGN_IN_BODY:
        json = {**json, "workflow_id": made_up()}
    elif key == ("POST", "/api/executions/<execution_id>/coaching/decision"):
        json = {**json, "suggestion_id": made_up()}
    return Request(path, json, request.headers, request.query)


# ---- the cases ---------------------------------------------------------------------------------------------
def _cases():
    for key, minimum in EXPECTED.items():
        method, rule = key
        for caller in CALLERS:
            who = "anonymous" if caller is None else caller
            yield pytest.param(key, caller, "own", id=f"{method} {rule} as {who}")
            if _has_foreign_case(key) and minimum != "public":
                yield pytest.param(key, caller, "foreign", id=f"{method} {rule} as {who} on foreign row")


# Known authorization bugs: case id -> reason. Marked xfail(strict=True) so that a fix makes the suite say so.
KNOWN_BUGS: dict[str, str] = {}


def _with_known_bugs(cases):
    for case in cases:
        reason = KNOWN_BUGS.get(case.id)
        yield (
            pytest.param(*case.values, id=case.id, marks=[pytest.mark.xfail(strict=True, reason=reason)])
            if reason
            else case
        )


def _error_code(response) -> str | None:
    body = response.get_json(silent=True) or {}
    return (body.get("error") or {}).get("code")


def test_every_api_route_has_a_row(world):
    """A route under /api/ without a row in EXPECTED fails here: decide who may call it, then add the row."""
    found = {
        (method, rule.rule)
        for rule in world.app.url_map.iter_rules()
        if rule.rule.startswith("/api/")
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    assert sorted(found - EXPECTED.keys()) == [], "routes without a row in EXPECTED"
    assert sorted(EXPECTED.keys() - found) == [], "rows in EXPECTED for routes that no longer exist"
    for method, rule in EXPECTED:
        unknown = [
            v for v in _variables(rule) if v not in NOT_ROWS and v not in world.rows["own"] and v not in ("token_id",)
        ]
        assert unknown == [], f"{method} {rule}: no row for {unknown}"


@pytest.mark.parametrize(("key", "caller", "side"), list(_with_known_bugs(_cases())))
def test_matrix(world, key, caller, side):
    method, rule = key
    minimum = EXPECTED[key]
    if minimum == "signed":  # no Slack signature: 401 whoever calls, and nothing is read
        world.matrix_cases_run += 1
        response = world.call(
            method, _path(world, rule, side, _build(world, key, side, caller, False).path), caller, {"payload": "{}"}
        )
        assert (response.status_code, _error_code(response)) == (401, "slack_signature"), response.get_data()[:300]
        return
    allowed = minimum == "public" or (caller is not None and RANK[caller] >= RANK[minimum])
    world.matrix_cases_run += 1
    request = _build(world, key, side, caller, fresh=allowed and side == "own")
    response = world.call(
        method, _path(world, rule, side, request.path) + request.query, caller, request.json, headers=request.headers
    )
    status, code, shown = response.status_code, _error_code(response), response.get_data(as_text=True)[:300]

    if minimum == "public":
        assert status not in (401, 403, 404) and status < 500, shown
        return
    if caller is None:
        assert (status, code) == (401, "unauthorized"), shown
        return
    if not allowed:
        # the role check comes first: the same 403 for an own, a foreign or a made-up row
        assert (status, code) == (403, "forbidden"), shown
        return
    if side == "own":
        if key in NOTHING_TO_UNDO:
            assert (status, code) == (409, "nothing_to_undo"), shown
            return
        expected = 201 if key in CREATED else 202 if key in ACCEPTED else 204 if key in NO_CONTENT else SUCCESS[method]
        assert status == expected, shown
        return
    # an allowed role naming another workspace's row: 404, the very answer for a row that does not exist
    assert (status, code) == (404, "not_found"), shown
    missing = _missing(request, key)
    again = world.call(method, _path(world, rule, side, missing.path) + missing.query, caller, missing.json)
    assert (again.status_code, _error_code(again)) == (404, "not_found"), again.get_data(as_text=True)[:300]


def test_foreign_rows_stayed_untouched(world):
    """After the matrix: the other workspace's rows are as they were (nothing reached them)."""
    rows = world.rows["foreign"]
    ex = world.ok("GET", f"/api/executions/{rows['execution_id']}", "other")
    assert ex["status"] == "waiting_decision"
    sug = world.ok("GET", f"/api/executions/{rows['execution_id']}/coaching/suggestion", "other")["suggestion"]
    assert sug["suggestion_id"] == rows["suggestion_id"]
    assert world.ok("GET", f"/api/executions/{rows['ask_execution_id']}", "other")["status"] != "completed"
    assert world.ok("GET", f"/api/workflows/{rows['workflow_id']}", "other")["version"] == 1
    assert world.ok("GET", f"/api/approvals/{rows['approval_id']}", "other")["status"] == "pending"
    assert world.ok("GET", "/api/auth/tokens", "other")["items"][-1]["revoked_at"] is None
    members = world.ok("GET", "/api/users", "other")["items"]
    assert [(m["email"], m["role"]) for m in members] == [(world.emails["other"], "admin")]


# ---- ids in filters and bodies -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "query",
    [
        "/api/executions/?workflow_id={workflow_id}",
        "/api/correction-packs?workflow_id={workflow_id}",
        "/api/audit?execution_id={execution_id}",
    ],
)
def test_a_foreign_id_in_a_filter_finds_nothing(world, query):
    body = world.ok("GET", query.format(**world.rows["foreign"]), "admin")
    assert body["items"] == []


def test_promotion_by_force_needs_an_admin(world):
    wf_id = world.workflow("own")
    forced = {"mode": "auto", "force": True, "reason": "tests"}
    response = world.call("POST", f"/api/workflows/{wf_id}/mode", "lead", forced)
    assert (response.status_code, _error_code(response)) == (403, "forbidden")
    response = world.call("POST", f"/api/workflows/{wf_id}/mode", "lead", {"mode": "auto"})
    assert (response.status_code, _error_code(response)) == (409, "conflict")  # not AUTO-ready: only by force
    assert world.ok("POST", f"/api/workflows/{wf_id}/mode", "admin", forced)["mode"] == "auto"
    assert world.ok("POST", f"/api/workflows/{wf_id}/mode", "lead", {"mode": "coaching"})["mode"] == "coaching"
    response = world.call("POST", f"/api/workflows/{world.rows['foreign']['workflow_id']}/mode", "admin", forced)
    assert (response.status_code, _error_code(response)) == (404, "not_found")


# ---- a too-low role is refused before its body is looked at ------------------------------------------------
# Bodies (or queries) the route's schema rejects: a caller whose role is too low must still get 403, not the 422
# that tells them which fields the route wants.
INVALID = {
    ("POST", "/api/workflows"): ("/api/workflows", ["not", "an", "object"]),
    ("PUT", "/api/workflows/<workflow_id>"): ("/api/workflows/{workflow_id}", ["not", "an", "object"]),
    ("POST", "/api/workflows/<workflow_id>/mode"): ("/api/workflows/{workflow_id}/mode", {"mode": "sideways"}),
    ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/mode"): (
        "/api/workflows/{workflow_id}/steps/mail/mode",
        {"mode": "sideways"},
    ),
    ("PUT", "/api/workflows/<workflow_id>/thresholds"): ("/api/workflows/{workflow_id}/thresholds", {"window": 0}),
    ("PATCH", "/api/correction-packs/<pack_id>"): ("/api/correction-packs/{pack_id}", {}),
    ("POST", "/api/correction-packs/<pack_id>/remove-change"): ("/api/correction-packs/{pack_id}/remove-change", {}),
    ("POST", "/api/correction-packs/import"): ("/api/correction-packs/import", {}),
    ("POST", "/api/users"): ("/api/users", {}),
    ("PUT", "/api/users/<user_id>/role"): ("/api/users/{user_id}/role", {"role": "king"}),
    ("GET", "/api/audit"): ("/api/audit?per_page=0", None),
    ("PUT", "/api/workspace/outbound"): ("/api/workspace/outbound", {"allow": "not a list"}),
    ("PUT", "/api/workspace/slack"): ("/api/workspace/slack", {"bot_token": 5, "default_channel": ["C0"]}),
    ("PUT", "/api/workspace/llm"): ("/api/workspace/llm", {"base_url": "ftp://x", "clear_api_key": "maybe"}),
    ("PUT", "/api/workspace/undo"): ("/api/workspace/undo", {"window_s": "long"}),
    ("PUT", "/api/workspace/reviews"): ("/api/workspace/reviews", {"attentive_floor_ms": 5}),
    ("GET", "/api/metrics/workflows/<workflow_id>/reviewers"): (
        "/api/metrics/workflows/{workflow_id}/reviewers?days=0",
        None,
    ),
    ("PUT", "/api/workspace/gateway"): ("/api/workspace/gateway", {"builtin_tools": ["echo", "rm.rf"]}),
    ("POST", "/api/policies"): ("/api/policies", {"name": "x", "effect": "maybe"}),
    ("PUT", "/api/policies/<id:policy_id>"): ("/api/policies/{policy_id}", {"name": "x", "effect": "maybe"}),
    ("PUT", "/api/policies/default"): ("/api/policies/default", {"destructive": "later"}),
    ("POST", "/api/policies/evaluate"): ("/api/policies/evaluate", {"params": {}}),
    ("POST", "/api/plans/<plan_id>/save-as-workflow"): ("/api/plans/{plan_id}/save-as-workflow", {"name": 5}),
    ("POST", "/api/tool-servers"): ("/api/tool-servers", {"name": "x", "transport": "carrier pigeon"}),
    ("PUT", "/api/tool-servers/<server_id>"): ("/api/tool-servers/{server_id}", {"name": "x", "transport": "pigeon"}),
    ("POST", "/api/agents"): ("/api/agents", {"name": ""}),
    ("POST", "/api/workflows/<workflow_id>/hooks"): ("/api/workflows/{workflow_id}/hooks", {"mode": "sideways"}),
    ("POST", "/api/workflows/<workflow_id>/schedules"): ("/api/workflows/{workflow_id}/schedules", {"cron": 5}),
    ("PATCH", "/api/workflows/<workflow_id>/schedules/<schedule_id>"): (
        "/api/workflows/{workflow_id}/schedules/{schedule_id}",
        {"enabled": "maybe"},
    ),
    ("POST", "/api/notifications/routes"): ("/api/notifications/routes", {"events": ["someday"]}),
    ("PUT", "/api/notifications/routes/<route_id>"): ("/api/notifications/routes/{route_id}", {"users": "all"}),
    ("POST", "/api/notifications/webhooks"): ("/api/notifications/webhooks", {"url": "gopher://x"}),
    ("PUT", "/api/notifications/webhooks/<endpoint_id>"): (
        "/api/notifications/webhooks/{endpoint_id}",
        {"enabled": "maybe"},
    ),
    ("POST", "/api/gateway/tools/<tool>/mode"): ("/api/gateway/tools/{tool}/mode", {"mode": "sideways"}),
    ("PATCH", "/api/gateway/tools/<tool>/pack"): ("/api/gateway/tools/{tool}/pack", {"enabled": "maybe"}),
    ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/replay"): (
        "/api/workflows/{workflow_id}/steps/mail/replay",
        {"when": 3},
    ),
    ("POST", "/api/gateway/tools/<tool>/replay"): ("/api/gateway/tools/{tool}/replay", {"limit": "many"}),
    ("POST", "/api/policies/replay"): ("/api/policies/replay", {"rule": "all of them"}),
    ("GET", "/api/gateway/tools/<tool>/proposals"): ("/api/gateway/tools/{tool}/proposals?identity=", None),
    ("POST", "/api/workflows/<workflow_id>/steps/<step_id>/regions"): (
        "/api/workflows/{workflow_id}/steps/mail/regions",
        {"name": "x", "when": "vars.a > 1"},
    ),
    ("POST", "/api/gateway/tools/<tool>/regions"): ("/api/gateway/tools/{tool}/regions", {"name": "x", "when": 3}),
    ("PATCH", "/api/regions/<region_id>"): ("/api/regions/{region_id}", {"order": "first"}),
    ("POST", "/api/regions/<region_id>/mode"): ("/api/regions/{region_id}/mode", {"mode": "sideways"}),
    ("GET", "/api/gateway/tools/<tool>/regions"): ("/api/gateway/tools/{tool}/regions?identity=", None),
}


def _invalid_cases():
    for key, (template, body) in INVALID.items():
        for caller in ROLES:
            if EXPECTED[key] in RANK and RANK[caller] < RANK[EXPECTED[key]]:
                yield pytest.param(
                    key, template, body, caller, id=f"{key[0]} {key[1]} as {caller} with an invalid body"
                )


def test_every_lead_or_admin_route_with_a_schema_is_in_the_invalid_body_table(world):
    with_schema = set()  # (method, rule) whose view method has @blp.arguments (flask-smorest's _apidoc)
    for rule in world.app.url_map.iter_rules():
        view = world.app.view_functions[rule.endpoint]
        cls = getattr(view, "view_class", None)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            func = getattr(cls, method.lower(), None) if cls else None
            if func is not None and getattr(func, "_apidoc", {}).get("arguments"):
                with_schema.add((method, rule.rule))
    refused = {key for key in with_schema if EXPECTED.get(key) in ("lead", "admin")}
    assert len(refused) >= 8, sorted(with_schema)  # the detection itself works
    assert sorted(refused - INVALID.keys()) == []


@pytest.mark.parametrize(("key", "template", "body", "caller"), list(_invalid_cases()))
def test_a_too_low_role_gets_403_even_with_an_invalid_body(world, key, template, body, caller):
    response = world.call(key[0], template.format(**world.rows["own"]), caller, body)
    assert (response.status_code, _error_code(response)) == (403, "forbidden"), response.get_json()


# ---- credentials -------------------------------------------------------------------------------------------
def _login(w: World, email: str, password: str = PASSWORD, address: str = "127.0.0.1", **more):
    client = w.app.test_client()
    response = client.post(
        "/api/auth/login",
        json={"email": email, "password": password, **more},
        environ_overrides={"REMOTE_ADDR": address},
    )
    return client, response


def test_unknown_api_paths_need_credentials_too(world):
    response = world.call("GET", "/api/no-such-thing", None)
    assert (response.status_code, _error_code(response)) == (401, "unauthorized")
    assert world.call("GET", "/api/no-such-thing", "operator").status_code == 404


def test_a_cookie_write_needs_the_csrf_token_and_a_bearer_write_does_not(world):
    client, login = _login(world, world.emails["lead"])
    assert login.status_code == 200
    csrf = login.get_json()["csrf_token"]
    assert csrf and client.get_cookie("coach_csrf").value == csrf
    session_cookie = client.get_cookie("coach_session")
    assert session_cookie is not None and session_cookie.http_only and session_cookie.same_site == "Lax"

    assert client.get("/api/auth/tokens").status_code == 200  # reads need no CSRF token
    for headers in ({}, {"X-CSRF-Token": "wrong"}, {"X-CSRF-Token": ""}):
        response = client.post("/api/auth/tokens", json={"name": "cookie"}, headers=headers)
        assert (response.status_code, _error_code(response)) == (403, "csrf_failed"), headers
        response = client.put(f"/api/workflows/{world.rows['own']['workflow_id']}/thresholds", json={}, headers=headers)
        assert (response.status_code, _error_code(response)) == (403, "csrf_failed"), headers
    assert client.post("/api/auth/tokens", json={"name": "cookie"}, headers={"X-CSRF-Token": csrf}).status_code == 201
    response = client.put(
        f"/api/workflows/{world.rows['own']['workflow_id']}/thresholds", json={}, headers={"X-CSRF-Token": csrf}
    )
    assert response.status_code == 200
    # the cookie is the lead's: a lead-only route is allowed, an admin-only one refused
    response = client.post(
        "/api/users", json={"email": "x@authz.test", "role": "operator"}, headers={"X-CSRF-Token": csrf}
    )
    assert (response.status_code, _error_code(response)) == (403, "forbidden")
    # a foreign row through the cookie is a 404 too
    response = client.put(
        f"/api/workflows/{world.rows['foreign']['workflow_id']}/thresholds", json={}, headers={"X-CSRF-Token": csrf}
    )
    assert (response.status_code, _error_code(response)) == (404, "not_found")
    # another session's CSRF token does not fit this session
    _, other_login = _login(world, world.emails["lead"])
    response = client.post(
        "/api/auth/tokens", json={"name": "cookie"}, headers={"X-CSRF-Token": other_login.get_json()["csrf_token"]}
    )
    assert (response.status_code, _error_code(response)) == (403, "csrf_failed")
    # logging out ends the session for this client
    assert client.post("/api/auth/logout", headers={"X-CSRF-Token": csrf}).status_code == 204
    assert client.get("/api/auth/me").status_code == 401

    bearer = world.call("POST", "/api/auth/tokens", "lead", {"name": "bearer"})
    assert bearer.status_code == 201


def test_wrong_password_and_unknown_email_are_the_same_401(world):
    _, wrong = _login(world, world.emails["operator"], "not-the-password", address="10.0.0.1")
    _, unknown = _login(world, "nobody@authz.test", "not-the-password", address="10.0.0.1")
    for response in (wrong, unknown):
        assert (response.status_code, _error_code(response)) == (401, "invalid_credentials")
        assert not any("coach_session=" in c for c in response.headers.getlist("Set-Cookie"))
    assert wrong.get_json()["error"]["message"] == unknown.get_json()["error"]["message"]


def test_the_sixth_failed_login_is_refused_with_retry_after(world):
    email = f"victim{world.seq()}@authz.test"
    make_user(world.services, email, "operator")
    for _ in range(5):
        _, response = _login(world, email, "wrong-password", address="10.0.0.6")
        assert (response.status_code, _error_code(response)) == (401, "invalid_credentials")
    _, response = _login(world, email, "wrong-password", address="10.0.0.6")
    assert (response.status_code, _error_code(response)) == (429, "too_many_requests")
    assert int(response.headers["Retry-After"]) >= 1
    # the right password waits too, from the attacker's address
    _, response = _login(world, email, PASSWORD, address="10.0.0.6")
    assert response.status_code == 429 and int(response.headers["Retry-After"]) >= 1


def test_failures_do_not_lock_the_real_user_out(world):
    """Five wrong passwords from one address block that address for that email; the owner, elsewhere, logs in
    (before: the email was blocked for everyone, so anyone could lock any account out)."""
    email = f"locked{world.seq()}@authz.test"
    make_user(world.services, email, "operator")
    for _ in range(6):
        _login(world, email, "wrong-password", address="10.0.2.6")
    _, response = _login(world, email, "wrong-password", address="10.0.2.6")
    assert response.status_code == 429
    _, response = _login(world, email, PASSWORD, address="10.0.2.7")
    assert response.status_code == 200, response.get_json()
    # a wrong password from yet another address is an ordinary 401, as for an unknown email there
    _, wrong = _login(world, email, "wrong-password", address="10.0.2.8")
    _, unknown = _login(world, f"nobody{world.seq()}@authz.test", "wrong-password", address="10.0.2.8")
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.get_json() == unknown.get_json()


def test_failed_logins_are_audited_in_the_members_workspaces_without_the_password(world):
    email = f"audited{world.seq()}@authz.test"
    make_user(world.services, email, "operator")
    make_user(world.services, email, "operator", "other")
    _login(world, email, "not-the-password-xyz", address="10.0.3.1")
    for caller in ("admin", "other"):
        body = world.ok("GET", f"/api/audit?action=login_failed&user={email}", caller)
        assert len(body["items"]) == 1, (caller, body)
        event = body["items"][0]
        assert event["target_type"] == "user" and event["after"] == {"address": "10.0.3.1"}
        assert event["result"] == "denied"
        assert "not-the-password-xyz" not in json.dumps(event)


def test_one_address_trying_many_emails_is_refused_too(world):
    for i in range(5):
        _, response = _login(world, f"spray{i}@authz.test", "wrong-password", address="10.0.0.8")
        assert response.status_code == 401
    _, response = _login(world, world.emails["operator"], PASSWORD, address="10.0.0.8")
    assert (response.status_code, _error_code(response)) == (429, "too_many_requests")
    assert int(response.headers["Retry-After"]) >= 1
    _, response = _login(world, world.emails["operator"], PASSWORD, address="10.0.0.9")
    assert response.status_code == 200  # the account itself is not blocked


def test_a_revoked_token_is_refused(world):
    made = world.ok("POST", "/api/auth/tokens", "operator", {"name": "soon revoked"}, status=201)
    token = made["token"]
    headers = {"Authorization": f"Bearer {token}"}
    client = world.app.test_client()
    assert client.get("/api/auth/me", headers=headers).status_code == 200
    assert client.delete(f"/api/auth/tokens/{made['id']}", headers=headers).status_code == 204
    for method, path in (("GET", "/api/auth/me"), ("GET", "/api/workflows"), ("POST", "/api/auth/tokens")):
        response = client.open(path, method=method, headers=headers, json={"name": "x"})
        assert (response.status_code, _error_code(response)) == (401, "unauthorized"), path
    for bad in ("coach_made-up", "", "Bearer", token + "x"):
        response = client.get("/api/auth/me", headers={"Authorization": f"Bearer {bad}"})
        assert response.status_code == 401, bad


def test_the_token_list_never_shows_a_secret(world):
    made = world.ok("POST", "/api/auth/tokens", "operator", {"name": "listed"}, status=201)
    assert made["token"].startswith("coach_")
    listing = world.call("GET", "/api/auth/tokens", "operator")
    text = listing.get_data(as_text=True)
    assert listing.status_code == 200 and made["token"] not in text and world.tokens["operator"] not in text
    assert "coach_" not in text and "hash" not in text
    for item in listing.get_json()["items"]:
        assert "token" not in item or item["token"] in (None, "")
    assert made["id"] in {item["id"] for item in listing.get_json()["items"]}
    # only the caller's tokens, and another user's token cannot be revoked
    assert made["id"] not in {item["id"] for item in world.ok("GET", "/api/auth/tokens", "lead")["items"]}
    response = world.call("DELETE", f"/api/auth/tokens/{made['id']}", "admin")
    assert (response.status_code, _error_code(response)) == (404, "not_found")
    # me: no password, no hash
    me = world.call("GET", "/api/auth/me", "operator").get_data(as_text=True)
    assert "password" not in me and "hash" not in me


@pytest.mark.parametrize("workspace", ["other", "other-id", "no-such-workspace"])
def test_a_workspace_you_are_not_in_is_a_404(world, workspace):
    asked = world.other_ws if workspace == "other-id" else workspace
    for path in ("/api/workflows", "/api/auth/me", f"/api/workflows/{world.rows['foreign']['workflow_id']}"):
        response = world.call("GET", path, "admin", headers={"X-Coach-Workspace": asked})
        assert (response.status_code, _error_code(response)) == (404, "not_found"), path
    # and at login
    _, response = _login(world, world.emails["admin"], workspace=asked, address="10.0.1.1")
    assert (response.status_code, _error_code(response)) == (404, "not_found")


def test_the_role_is_the_one_of_the_chosen_workspace(world):
    """A user who is admin in default and operator in other acts with the role of the workspace asked for."""
    email = "both@authz.test"
    make_user(world.services, email, "admin")
    token = make_user(world.services, email, "operator", "other")
    client = world.app.test_client()

    def call(method, path, workspace, json=None):
        return client.open(
            path, method=method, json=json, headers={"Authorization": f"Bearer {token}", "X-Coach-Workspace": workspace}
        )

    assert call("GET", "/api/users", "default").status_code == 200
    response = call("GET", "/api/users", "other")
    assert (response.status_code, _error_code(response)) == (403, "forbidden")
    response = call("PUT", f"/api/workflows/{world.rows['foreign']['workflow_id']}/thresholds", "other", {})
    assert (response.status_code, _error_code(response)) == (403, "forbidden")
    # each workspace shows its own rows only, whichever the user is in
    ids = {wf["id"] for wf in call("GET", "/api/workflows?per_page=100", "other").get_json()["items"]}
    assert world.rows["foreign"]["workflow_id"] in ids and world.rows["own"]["workflow_id"] not in ids
    response = call("GET", f"/api/workflows/{world.rows['own']['workflow_id']}", "other")
    assert (response.status_code, _error_code(response)) == (404, "not_found")
    assert call("GET", f"/api/workflows/{world.rows['own']['workflow_id']}", "default").status_code == 200
    me = call("GET", "/api/auth/me", "other").get_json()
    assert (me["workspace_id"], me["role"]) == (world.other_ws, "operator")
    assert {w["slug"]: w["role"] for w in me["workspaces"]} == {"default": "admin", "other": "operator"}


def test_the_audit_chains_still_verify(world):
    """Last: everything above wrote audit events in both workspaces; both chains are whole."""
    for caller in ("admin", "other"):
        body = world.ok("GET", "/api/audit/verify", caller)
        assert body["ok"] is True and body["checked"] > 0, (caller, body)
    if world.matrix_cases_run < 100:
        return  # run alone: the matrix did not write its events
    lines = world.call("GET", "/api/audit?format=jsonl", "admin").get_data(as_text=True).splitlines()
    actions = {json.loads(line)["action"] for line in lines if line.strip()}
    assert {
        "login",
        "token_create",
        "token_revoke",
        "workflow_create",
        "workflow_update",
        "workflow_delete",
        "cancel",
        "decision",
        "pause",
        "resume",
        "pack_change",
        "pack_import",
        "thresholds_change",
        "user_change",
    } <= actions, actions
