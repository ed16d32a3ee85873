"""core.toolservers: names, risk from MCP annotations (the protocol's defaults and trust rule), results."""

from core import toolservers as T
from core.tools import ToolRegistry


def test_unannotated_tool_is_destructive_and_open_world():
    assert T.annotated_risk(None) == "destructive"
    assert T.annotated_risk({}) == "destructive"


def test_annotations_map_to_risks():
    assert T.annotated_risk({"readOnlyHint": True}) == "read"
    assert T.annotated_risk({"readOnlyHint": False, "destructiveHint": False}) == "external"  # open world by default
    assert T.annotated_risk({"destructiveHint": False, "openWorldHint": False}) == "write"
    assert T.annotated_risk({"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}) == "destructive"


def test_a_risk_is_said_by_annotations_that_map_back_to_it():
    from core.tools import RISKS

    for risk in RISKS:  # the gateway's built-ins (coach.<tool>) are annotated so that an agent reads their risk
        assert T.annotated_risk(T.risk_annotations(risk)) == risk
    assert T.risk_annotations("read") == {"readOnlyHint": True}
    assert T.risk_annotations("external")["openWorldHint"] is True
    assert T.risk_annotations("destructive")["destructiveHint"] is True


def test_untrusted_servers_annotations_are_hints_only_and_override_wins():
    assert T.effective_risk({"readOnlyHint": True}, trusted=False) == "destructive"
    assert T.effective_risk({"readOnlyHint": True}, trusted=True) == "read"
    assert T.effective_risk(None, trusted=False, override="read") == "read"
    assert T.effective_risk({"readOnlyHint": True}, trusted=True, override="write") == "write"


def test_server_names_are_slugs_outside_coachs_namespaces():
    assert T.check_server_name("github") is None
    assert T.check_server_name("my-orders_2") is None
    assert T.check_server_name("GitHub") and T.check_server_name("a.b") and T.check_server_name("")
    assert "Coach's own tools" in T.check_server_name("sql")
    assert "Coach's own tools" in T.check_server_name("coach")  # coach.<tool>: the built-ins agents call


def test_input_schema_checks():
    assert T.check_input_schema({"type": "object", "properties": {"x": {"type": "string"}}}) is None
    assert "not a valid JSON Schema" in T.check_input_schema({"type": "object", "properties": {"x": {"type": "nope"}}})
    assert "object" in T.check_input_schema({"type": "array"})
    assert T.check_input_schema(None) == "inputSchema is not an object"


def test_results_become_outputs_and_errors():
    result = {
        "content": [{"type": "text", "text": "hello"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        "structuredContent": {"total": 3},
    }
    out = T.step_output(result)
    assert out["text"] == "hello" and out["structured"] == {"total": 3}
    assert out["content"][1] == {"type": "image", "mimeType": "image/png", "bytes": 3}
    assert T.error_message({"content": [{"type": "text", "text": "no such order"}], "isError": True}) == "no such order"
    assert T.error_message({"isError": True}).startswith("the tool reported an error")


class _Tool:
    def __init__(self, name):
        self.name, self.description, self.params_schema, self.risk = name, "", {"type": "object"}, "read"

    def run(self, params, ctx):
        return {}


class _Source:
    def tools_for(self, workspace_id):
        return {"shop.lookup": _Tool("shop.lookup"), "echo": _Tool("echo")} if workspace_id == "w1" else {}


def test_registry_shows_a_workspaces_tools_to_that_workspace_only():
    registry = ToolRegistry()
    echo = _Tool("echo")
    registry.register(echo)
    registry.add_source(_Source())
    assert "shop.lookup" in registry.for_workspace("w1")
    assert registry.for_workspace("w1").get("echo") is echo  # a workspace's tool never shadows the server's
    assert "shop.lookup" not in registry.for_workspace("w2")
    assert "shop.lookup" not in registry
    assert "anything" in registry.lenient() and registry.lenient().get("anything") is None
