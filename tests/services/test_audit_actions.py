"""The list of audit actions (services/audit/service.py ACTIONS, served by GET /api/audit/actions and documented in
docs/auth.md "Audit") is every action the code records: each `audit.record(...)` call of api/, core/ and services/
is read (its source, with the standard library's ast) and the action it can record is worked out from its
expression (a string, `a if c else b`, `"prefix_" + (...)`, a local or module name assigned one of those, a
`{...}.get(k, default)` of strings). A call whose action cannot be worked out that way fails the test too: write it
so it can be, or the list could drift again (#42 item 4: `gateway_builtins`, `llm_provider_change`, `undo_window` …
were recorded and not listed)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from services.audit import service as audit

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("api", "core", "services")


class Unknown(Exception):
    pass


def _assignments(tree: ast.AST, name: str) -> list[ast.expr]:
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id == name
    ]


def _possible(expr: ast.expr, scopes: list[ast.AST]) -> set[str]:
    """Every string `expr` can be, or Unknown."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.IfExp):
        return _possible(expr.body, scopes) | _possible(expr.orelse, scopes)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return {a + b for a in _possible(expr.left, scopes) for b in _possible(expr.right, scopes)}
    if isinstance(expr, ast.Dict):
        return set().union(*(_possible(v, scopes) for v in expr.values))
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "get"
        and isinstance(expr.func.value, ast.Dict)
        and len(expr.args) == 2
    ):
        return _possible(expr.func.value, scopes) | _possible(expr.args[1], scopes)
    if isinstance(expr, ast.Name):
        for scope in scopes:  # the innermost function first, then the module
            values = _assignments(scope, expr.id)
            if values:
                return set().union(*(_possible(v, scopes) for v in values))
    raise Unknown(ast.unparse(expr))


def recorded_actions() -> tuple[dict[str, list[str]], list[str]]:
    """{action: [where it is recorded]}, and the calls whose action could not be worked out."""
    found: dict[str, list[str]] = {}
    unknown: list[str] = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            for node in ast.walk(tree):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "record"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "audit"
                ):
                    continue
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                action = next(
                    (kw.value for kw in node.keywords if kw.arg == "action"),
                    node.args[3] if len(node.args) > 3 else None,
                )
                inner = [f for f in functions if f.lineno <= node.lineno <= (f.end_lineno or f.lineno)]
                scopes = sorted(inner, key=lambda f: -f.lineno) + [tree]
                try:
                    if action is None:
                        raise Unknown("no action argument")
                    for name in _possible(action, scopes):
                        found.setdefault(name, []).append(where)
                except Unknown as exc:
                    unknown.append(f"{where}: {exc}")
    return found, unknown


def test_every_recorded_action_is_listed_and_every_listed_one_is_recorded():
    found, unknown = recorded_actions()
    assert unknown == [], "audit.record calls whose action the list cannot be checked against"
    assert len(found) > 50  # the scan sees the code's calls
    missing = {name: where for name, where in found.items() if name not in audit.ACTIONS}
    assert missing == {}, "recorded but not in services/audit/service.py ACTIONS"
    assert sorted(set(audit.ACTIONS) - set(found)) == [], "listed but never recorded"
    assert len(set(audit.ACTIONS)) == len(audit.ACTIONS)


def test_the_scan_finds_the_actions_the_probe_missed():
    found, _ = recorded_actions()
    assert {"gateway_builtins", "llm_provider_change", "undo_window"} <= set(found)
    # the forms it works out: a conditional, a concatenation, a dict's get, a module constant
    assert {
        "member_disable",
        "member_enable",
        "notification_route_create",
        "notification_route_update",
        "gateway_promotion",
        "gateway_pin",
        "gateway_demotion",
        "execution_triggered",
    } <= set(found)


def test_docs_name_every_action():
    text = (ROOT / "docs" / "auth.md").read_text()
    section = text[text.index("## Audit") : text.index("## Bootstrap")]
    table = [line for line in section.splitlines() if line.startswith("| ") and "`" in line]
    named = {
        name
        for line in table  # the names of a row's actions, not the words in their explanations (…)
        for name in re.findall(r"`([a-z_]+)`", re.sub(r"\([^()]*\)", "", line.split("|")[2]))
    }
    assert sorted(set(audit.ACTIONS) - named) == [], "actions docs/auth.md's table does not name"
    assert sorted(named - set(audit.ACTIONS)) == [], "names in docs/auth.md's table that are no action"
