"""The workflow definition format in the contract: GET /api/workflows/schema (JSON Schema), the OpenAPI document's
step types, and the 422s of definitions the schemas refuse, each field on its line."""

from __future__ import annotations

import jsonschema
import pytest
import yaml

from tests.conftest import authed_client

pytestmark = pytest.mark.shared_app

STEP_FIELDS = {
    "ActionStep": {"tool", "params", "human_timeout_s", "on_human_timeout", "timeout_answer"},
    "DecisionStep": {"condition", "then", "else"},
    "ValidationStep": {"condition", "schema", "target"},
    "HumanInputStep": {"question", "human_timeout_s", "on_human_timeout", "timeout_answer"},
    "ApprovalStep": {"message", "approvers", "quorum", "separate_duties", "timeout_s", "on_timeout"},
    "AgentStep": {
        "goal",
        "tools",
        "max_tool_iterations",
        "context_budget_kb",
        "model",
        "output_schema",
        "instructions",
    },
}
EVERY_STEP = {"id", "name", "description", "type", "depends_on", "when", "timeout_s", "retries", "retry_backoff_s"}


@pytest.fixture
def served(api):
    return api.ok("GET", "/api/workflows/schema")


def test_the_schema_is_a_json_schema_of_the_definition_naming_every_step_type(served):
    jsonschema.Draft7Validator.check_schema(served)
    assert served["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert served["required"] == ["name", "steps"]
    step = served["properties"]["steps"]["items"]
    assert [ref["$ref"] for ref in step["oneOf"]] == [f"#/definitions/{name}" for name in STEP_FIELDS]
    for name, own in STEP_FIELDS.items():
        fields = set(served["definitions"][name]["properties"])
        assert own | EVERY_STEP <= fields, (name, own - fields)
        assert (
            served["definitions"][name]["properties"]["type"]["enum"][0]
            == {
                "ActionStep": "action",
                "DecisionStep": "decision",
                "ValidationStep": "validation",
                "HumanInputStep": "human_input",
                "ApprovalStep": "approval",
                "AgentStep": "agent",
            }[name]
        )
    approval = served["definitions"]["ApprovalStep"]["properties"]
    assert approval["quorum"]["minimum"] == 1 and approval["on_timeout"]["enum"] == ["approve", "reject", "fail"]
    # OpenAPI 3.0's forms said as JSON Schema does
    assert served["properties"]["human_timeout_s"]["type"] == ["number", "null"]
    assert served["properties"]["human_timeout_s"]["exclusiveMinimum"] == 0


def test_the_schema_is_the_openapi_documents(api, served):
    document = api.ok("GET", "/api/openapi.json")
    components = document["components"]["schemas"]
    assert set(served["properties"]) == set(components["WorkflowDefinition"]["properties"])
    body = document["paths"]["/api/workflows"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/WorkflowDefinition"}
    answer_steps = components["Workflow"]["properties"]["steps"]["items"]["oneOf"]
    assert [r["$ref"].rsplit("/", 1)[1] for r in answer_steps] == list(STEP_FIELDS)
    for name in STEP_FIELDS:
        assert set(components[name]["properties"]) == set(served["definitions"][name]["properties"])


def test_every_template_is_valid_by_the_schema_and_a_wrong_one_is_not(api, served):
    validator = jsonschema.Draft7Validator(served)
    templates = api.ok("GET", "/api/workflows/templates")["items"]
    assert templates
    for template in templates:
        definition = yaml.safe_load(template["yaml"])
        assert not list(validator.iter_errors(definition)), template["id"]
    wrong = {
        "name": "w",
        "steps": [
            {"id": "ok", "type": "approval", "quorum": 0},
            {"id": "t", "type": "teleport"},
            {"id": "a", "type": "agent"},
        ],
    }
    assert len(list(validator.iter_errors(wrong))) == 3


def test_the_schema_needs_a_signed_in_member(app):
    assert app.test_client().get("/api/workflows/schema").status_code == 401


def test_an_operator_reads_the_schema(app):
    assert authed_client(app, "operator").get("/api/workflows/schema").status_code == 200


BAD_YAML = """\
name: Bad steps
steps:
  - id: sign_off
    type: approval
    quorum: 0
    approvers: {roles: [boss]}
  - id: think
    type: agent
    max_tool_iterations: 5000
  - id: ask
    type: human_input
    on_human_timeout: accept
    human_timeout_s: 60
  - id: route
    type: decision
    condition: "true"
    then: 3
  - id: teleport
    type: beam
"""


def test_a_422_of_every_step_type_says_each_field_in_words_on_its_line(api):
    response = api.client.post("/api/workflows", data=BAD_YAML, content_type="application/yaml")
    body = response.get_json()
    assert response.status_code == 422, body
    assert body["error"]["details"] == {
        "steps[0].quorum": ["must be an integer >= 1 (how many distinct people must approve)"],
        "steps[0].approvers.roles[0]": ["unknown role 'boss'; one of ['operator', 'lead', 'admin']"],
        "steps[1].goal": ["is required for an agent step: what the LLM must do"],
        "steps[1].max_tool_iterations": ["must be an integer from 1 to 1000"],
        "steps[2].question": ["is required for a human_input step"],
        "steps[2].on_human_timeout": [
            "must be one of ['skip', 'fail', 'answer']: accept is for steps that are suggested (action steps)"
        ],
        "steps[3].then": ["must be a step id or a list of step ids"],
        "steps[4].type": [
            "unknown step type 'beam'. Known step types: action, decision, validation, human_input, approval and agent"
        ],
    }
    assert body["error"]["lines"] == {
        "steps[0].quorum": 5,
        "steps[0].approvers.roles[0]": 6,
        "steps[1].goal": 7,  # missing: the step's own line
        "steps[1].max_tool_iterations": 9,
        "steps[2].question": 10,
        "steps[2].on_human_timeout": 12,
        "steps[3].then": 17,
        "steps[4].type": 19,
    }


def test_a_plan_is_checked_by_the_same_schemas(api):
    response = api.client.post("/api/plans", json={"steps": [{"id": "a", "type": "agent", "goal": " "}]})
    assert response.status_code == 422
    assert response.get_json()["error"]["details"] == {
        "steps[0].goal": ["is required for an agent step: what the LLM must do"]
    }
    response = api.client.post("/api/plans", json={"steps": [{"id": "a", "tool": "noop"}], "mode": "sometimes"})
    assert response.status_code == 422 and "mode" in response.get_json()["error"]["details"]
