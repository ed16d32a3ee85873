"""Demo workflows and their data, loaded on `make run` unless COACH_DEMO=0."""

from __future__ import annotations

import logging
import random
import shutil
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import select

from core.regions import region as R
from services.coaching import service as coaching
from services.container import Services
from services.decisions import coaching as decisions
from services.executions import service as executions
from services.models.coaching import Suggestion
from services.models.workflows import Workflow
from services.policies import service as policies
from services.regions import service as regions
from services.tools.files import workspace_root
from services.workflows import service as workflows

DEMO_DIR = Path(__file__).resolve().parents[1] / "demo"

log = logging.getLogger(__name__)


def templates() -> list[dict]:
    """The demo workflows as starting templates for a new definition: their YAML as written (comments kept)."""
    out = []
    for path in sorted(DEMO_DIR.glob("*.yaml")):
        text = path.read_text()
        definition = yaml.safe_load(text) or {}
        out.append(
            {
                "id": path.stem,
                "name": definition.get("name", path.stem),
                "description": (definition.get("description") or "").strip(),
                "yaml": text,
            }
        )
    return out


def load(services: Services, workspace_id: str) -> list[str]:
    """Create each demo workflow that is not there yet (by name), and copy the demo data files into the
    workspace's own data folder (<data>/<workspace id>/)."""
    data_dir = workspace_root(services.settings, workspace_id, create=True)
    for source in (DEMO_DIR / "data").iterdir():
        if not (data_dir / source.name).exists():
            shutil.copy(source, data_dir / source.name)
    created = []
    with services.command() as uow:
        existing = set(
            uow.session.scalars(
                select(Workflow.name).where(Workflow.workspace_id == workspace_id, Workflow.deleted_at.is_(None))
            )
        )
        for path in sorted(DEMO_DIR.glob("*.yaml")):
            definition = yaml.safe_load(path.read_text())
            if definition["name"] in existing:
                continue
            if "base_url" in definition.get("variables", {}):
                definition["variables"]["base_url"]["default"] = (
                    f"http://{services.settings.host}:{services.settings.port}"
                )
                if not services.settings.outbound_allow:
                    log.warning(
                        "the demo's %r calls this server at %s, which outbound requests refuse unless "
                        "COACH_OUTBOUND_ALLOW names it (make run sets 127.0.0.1)",
                        definition["name"],
                        services.settings.host,
                    )
            created.append(
                (
                    definition["name"],
                    workflows.create(
                        uow.session, services.tools.for_workspace(workspace_id), workspace_id, definition
                    ).id,
                )
            )
    by_name = dict(created)
    with services.command() as uow:
        for name, rule in RULES:
            if name in by_name:
                policies.create(uow.session, workspace_id, {**rule, "scope": {"workflow_id": by_name[name]}}, "demo")
    if "Refund review" in by_name:
        with services.command() as uow:  # a region of the refund step: small refunds learn on their own
            regions.create(
                uow.session,
                workspace_id,
                "demo",
                regions.STEP,
                regions.step_key(by_name["Refund review"], "refund"),
                R.check_region(REGION),
                workflow_id=by_name["Refund review"],
                step_id="refund",
            )
        history(services, workspace_id, by_name["Refund review"])
    for name, variables in QUEUE:
        if name in by_name:
            start(services, workspace_id, by_name[name], variables)
    if "Supplier payment" in by_name:  # waits for two leads' sign-off (an approval step, in normal mode)
        start(services, workspace_id, by_name["Supplier payment"], {}, mode="normal")
    return [name for name, _ in created] + mcp_demo(services, workspace_id)


def orders_command() -> list[str]:
    """The demo MCP server's command line (demo/orders_mcp.py): `make run` allows exactly this one."""
    return [sys.executable, str(DEMO_DIR / "orders_mcp.py")]


def mcp_demo(services: Services, workspace_id: str) -> list[str]:
    """The tool server `orders` (demo/orders_mcp.py over stdio) and the workflow that calls it, when the server's
    configuration allows the command (COACH_MCP_STDIO_ALLOW; `make run` does)."""
    from services.models.toolservers import ToolServer
    from services.toolservers import service as tool_servers
    from services.toolservers.source import stdio_allowed

    command = orders_command()
    if not stdio_allowed(command, services.settings.mcp_stdio_allow):
        log.info("demo MCP server not added: COACH_MCP_STDIO_ALLOW does not allow %r", " ".join(command))
        return []
    with services.command() as uow:
        row = uow.session.scalar(
            select(ToolServer).where(ToolServer.workspace_id == workspace_id, ToolServer.name == "orders")
        )
        if row is None:
            row = tool_servers.create(
                uow.session,
                services.mcp,
                workspace_id,
                {
                    "name": "orders",
                    "transport": "stdio",
                    "command": command,
                    "trusted": True,
                    "description": "The shop's orders (the demo's own MCP server, demo/orders_mcp.py)",
                },
                "demo",
            )
        server_id = row.id
    listed = tool_servers.refresh(services.db, services.mcp, workspace_id, server_id, "demo")
    if listed.last_error:
        log.warning("the demo MCP server did not list its tools: %s", listed.last_error)
        return []
    definition = yaml.safe_load((DEMO_DIR / "mcp" / "refund_lookup.yaml").read_text())
    with services.command() as uow:
        exists = uow.session.scalar(
            select(Workflow.id).where(
                Workflow.workspace_id == workspace_id,
                Workflow.name == definition["name"],
                Workflow.deleted_at.is_(None),
            )
        )
        if exists is not None:
            return []
        workflows.create(uow.session, services.tools.for_workspace(workspace_id), workspace_id, definition)
    return [definition["name"]]


CUSTOMERS = [
    "Ada Lovelace",
    "Grace Hopper",
    "Alan Turing",
    "Edsger Dijkstra",
    "Barbara Liskov",
    "Donald Knuth",
    "Frances Allen",
    "John Backus",
    "Margaret Hamilton",
    "Niklaus Wirth",
    "Tony Hoare",
    "Leslie Lamport",
    "Shafi Goldwasser",
    "Ken Iverson",
    "Jean Sammet",
    "Dennis Ritchie",
    "Sophie Wilson",
    "Robin Milner",
    "Adele Goldberg",
    "Butler Lampson",
    "Fran Allen",
    "Per Brinch Hansen",
    "Annie Easley",
]
OPERATORS = ["ada@coach.local", "grace@coach.local"]
# one policy rule per demo workflow where one makes sense (README "Policies"), scoped to that workflow
RULES = [
    (
        "Invoice summary (agent)",
        {
            "name": "Agent writes are reviewed",
            "order": 10,
            "effect": "require_review",
            "reason": "a file an agent writes is looked at by a person first",
            "match": {"tool": "file.write", "agent_step": "*"},
        },
    ),
    (
        "Invoice intake",
        {
            "name": "Summaries stay in summaries/",
            "order": 10,
            "effect": "require_review",
            "reason": "a file written outside summaries/ is checked by a person",
            "match": {"tool": "file.write", "path_outside": "summaries/"},
        },
    ),
    (
        "Refund review",
        {
            "name": "Large refunds are reviewed",
            "order": 10,
            "effect": "require_review",
            "reason": "a refund over 200 is looked at by a person, even in AUTO",
            "match": {"tool": "echo", "params": "params.amount is defined and params.amount | float > 200"},
        },
    ),
    (
        "Service check",
        {
            "name": "Only this server is checked",
            "order": 10,
            "effect": "deny",
            "reason": "the service check calls this server's own health endpoint, nothing else",
            "match": {"tool": "http.request", "host_not_in": ["127.0.0.1", "localhost"]},
        },
    ),
]
# the refund step's region (docs/autonomy.md#regions): its calls count for it apart from the large refunds
REGION = {"name": "Refunds up to 200", "when": "params.amount is defined and params.amount | float <= 200"}
# what is waiting in the queue after `make run`: the refund suggestion shows the learned currency
QUEUE = [
    ("Refund review", {"order_id": "A-2001", "customer": "Ken Thompson", "amount": 19.99}),
    ("Refund review", {"order_id": "A-2002", "customer": "Radia Perlman", "amount": 250}),
    ("Invoice intake", {}),
    ("Service check", {}),
]


def start(services: Services, workspace_id: str, workflow_id: str, variables: dict, mode: str = "coaching") -> str:
    with services.command() as uow:
        execution_id = executions.start(
            uow.session, services.definitions, workspace_id, workflow_id, variables, mode
        ).id
        uow.run_next(execution_id)
    services.runner.wait_idle(30)
    return execution_id


def history(services: Services, workspace_id: str, workflow_id: str) -> None:
    """23 refunds decided through the real decision path, as two operators would have: every step accepted
    except the currency, which operators corrected to GBP three times (a correction pack learns it) before the
    pack suggested it by itself. 66 of 69 accepted: enough evidence for the sequential test that acceptance is
    at least 85% (docs/autonomy.md), so Refund review is AUTO-ready. Each operator took a human while to decide
    (4 to 40 s, seeded), so the latency figures look like people's."""
    think = random.Random(2026)
    for n, customer in enumerate(CUSTOMERS):
        execution_id = start(
            services,
            workspace_id,
            workflow_id,
            {"order_id": f"A-10{n:02d}", "customer": customer, "amount": 10 + 7.5 * n},
        )
        operator = OPERATORS[n % 2]
        for _ in range(3):
            with services.db.read() as session:
                pending = [(s.id, s.step_id, s.params) for s in coaching.pending(session, execution_id)]
            if not pending:
                break
            suggestion_id, step_id, params = pending[0]
            body: dict[str, Any] = {"suggestion_id": suggestion_id, "decision": "accept"}
            if step_id == "refund" and params.get("currency") != "GBP":
                body = {
                    "suggestion_id": suggestion_id,
                    "decision": "correct",
                    "correction": {**params, "currency": "GBP"},
                }
            _pushed_earlier(services, suggestion_id, think.uniform(4.0, 40.0))
            decisions.submit(services, workspace_id, execution_id, body, operator, undo_window_s=0)
            services.runner.wait_idle(30)


def _pushed_earlier(services: Services, suggestion_id: str, seconds: float) -> None:
    """The suggestion as if pushed `seconds` ago: its decision's latency is the operator's thinking time."""
    with services.command() as uow:
        suggestion = uow.session.get(Suggestion, suggestion_id)
        if suggestion is None:  # (read pending just before)
            raise LookupError(f"suggestion {suggestion_id} is gone")
        suggestion.created_at = suggestion.created_at - timedelta(seconds=seconds)
