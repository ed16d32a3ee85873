"""Replays and proposals for the routes (api/replay.py) and for the regions' listing: load a scope's history
(services/replay/history.py) and the workspace's rules, and ask core/regions. Read-only: nothing here is stored,
and nothing here is promotion evidence."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from core.coaching.levels import LevelThresholds
from core.errors import NotFound, ValidationFailed
from core.policy import compile_rule
from core.regions import proposals as P
from core.regions import replay as R
from core.tools import ToolRegistry
from services.gateway import builtins, learning
from services.metrics import service as metrics
from services.models.workflows import Workflow
from services.policies import service as policies
from services.replay import history
from services.workflows import service as workflows


def _step(session: Session, workspace_id: str, workflow_id: str, step_id: str) -> Workflow:
    wf = workflows.get(session, workspace_id, workflow_id)
    history.check_step(session, wf, step_id)
    return wf


def check_tool(svc, session: Session, workspace_id: str, tool: str) -> None:
    """404 unless the workspace's agents have the tool (listed now, or with decisions or a mode)."""
    if tool not in builtins.gateway_tools(svc, workspace_id, session) and not learning.known(
        session, workspace_id, tool
    ):
        raise NotFound(f"this workspace's agents have no tool {tool!r}", details={"tool": [tool]})


def replay_step(
    session: Session,
    workspace_id: str,
    workflow_id: str,
    step_id: str,
    when: str,
    *,
    limit: int = R.DEFAULT_LIMIT,
    tools: ToolRegistry | None = None,
) -> dict[str, Any]:
    R.check_when(when)
    wf = _step(session, workspace_id, workflow_id, step_id)
    past = history.step_history(session, wf, step_id, limit, tools=tools)
    return R.replay_condition(when, past, policies.load_rule_set(session, workspace_id), limit=limit)


def replay_tool(
    session: Session,
    workspace_id: str,
    tool: str,
    when: str,
    *,
    identity: str | None = None,
    limit: int = R.DEFAULT_LIMIT,
    tools: ToolRegistry | None = None,
) -> dict[str, Any]:
    R.check_when(when)
    past = history.gateway_history(session, workspace_id, tool, limit, identity=identity, tools=tools)
    return R.replay_condition(when, past, policies.load_rule_set(session, workspace_id), limit=limit)


def replay_policy(
    session: Session,
    workspace_id: str,
    rule: Any,
    *,
    workflow_id: str | None = None,
    step_id: str | None = None,
    tool: str | None = None,
    limit: int = R.DEFAULT_LIMIT,
    tools: ToolRegistry | None = None,
) -> dict[str, Any]:
    """The replay of a rule as POST /api/policies takes it, as if it were added to the workspace's rules, over the
    latest calls of a workflow's step, a workflow (its scope's, when it names one), a gateway tool, or else the
    workspace's. 422 naming `rule.<field>` for a rule that is not valid."""
    try:
        compiled = compile_rule(rule, rule_id=R.REPLAY_RULE_ID)
    except ValidationFailed as exc:
        raise ValidationFailed(
            exc.message, {f"rule.{k}" if k != "(body)" else "rule": v for k, v in (exc.details or {}).items()}
        ) from None
    if step_id is not None and workflow_id is None:
        raise ValidationFailed("a step needs its workflow", {"workflow_id": ["is required with step_id"]})
    if tool is not None and workflow_id is not None:
        raise ValidationFailed(
            "replay over a workflow or a gateway tool, not both",
            {"tool": ["give either workflow_id (and step_id) or tool"]},
        )
    if compiled.scope_workflow_id is not None:
        try:
            workflows.get(session, workspace_id, compiled.scope_workflow_id)
        except NotFound:
            raise ValidationFailed(
                "the scope names no workflow of this workspace",
                {"rule.scope.workflow_id": [f"no workflow {compiled.scope_workflow_id!r} here"]},
            ) from None
    if tool is not None:
        past = history.gateway_history(session, workspace_id, tool, limit, tools=tools)
    elif workflow_id is not None or compiled.scope_workflow_id is not None:
        wf_id = workflow_id or compiled.scope_workflow_id or ""  # (one is set: the test above)
        wf = (
            _step(session, workspace_id, wf_id, step_id)
            if step_id is not None
            else workflows.get(session, workspace_id, wf_id)
        )
        past = history.step_history(session, wf, step_id, limit, tools=tools)
    else:
        past = history.workspace_history(session, workspace_id, limit, tools=tools)
    return R.replay_rule(compiled, past, policies.load_rule_set(session, workspace_id), limit=limit)


def _proposed(past: list[R.Past], rules, bar: float, subject: str, limit: int) -> list[dict[str, Any]]:
    decided = [(p.call.params, p.decision == "accept") for p in past if p.decision != "skip"]
    out = []
    for proposal in P.propose(decided, bar=bar, subject=subject):
        out.append({**proposal.to_dict(), "replay": R.replay_condition(proposal.when, past, rules, limit=limit)})
    return out


def proposals_for_step(
    session: Session,
    workspace: str,
    workflow_id: str,
    step_id: str,
    *,
    tools: ToolRegistry | None = None,
    limit: int = R.DEFAULT_LIMIT,
) -> list[dict[str, Any]]:
    """Proposed regions of a workflow's step (or `<agent step>:<tool>`), each with `when`, `explanation`,
    `coverage`, `suggested_mode`, `lower_bound` and its `replay` over the latest `limit` calls. Learned from the
    latest P.MAX_DECISIONS counted decisions; none under P.MIN_DECISIONS."""
    wf = _step(session, workspace, workflow_id, step_id)
    past = history.step_history(session, wf, step_id, P.MAX_DECISIONS, tools=tools)
    tool = step_id.partition(":")[2] or next((p.call.tool for p in past if p.call.tool), "") or step_id
    bar = metrics.workflow_thresholds(wf).auto_acceptance
    return _proposed(past, policies.load_rule_set(session, workspace), bar, f"{tool} calls", limit)


def proposals_for_tool(
    session: Session,
    workspace: str,
    tool: str,
    *,
    identity: str | None = None,
    tools: ToolRegistry | None = None,
    limit: int = R.DEFAULT_LIMIT,
) -> list[dict[str, Any]]:
    """Proposed regions of a gateway tool (for one identity, or all), as proposals_for_step's."""
    past = history.gateway_history(session, workspace, tool, P.MAX_DECISIONS, identity=identity, tools=tools)
    return _proposed(
        past, policies.load_rule_set(session, workspace), LevelThresholds().auto_acceptance, f"{tool} calls", limit
    )


def gateway_registry(svc, session: Session, workspace_id: str) -> ToolRegistry:
    """The registry a gateway call's tool (and its risk) is found in: the workspace's, with its exposed built-ins."""
    return builtins.registry(svc.tools, session, workspace_id)
