"""A workflow definition as the core sees it: already validated, immutable."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.agent.spec import AgentSpec
from core.approvals import ApprovalSpec
from core.gates import HumanTimeout

STEP_TYPES = ("action", "decision", "validation", "approval", "human_input", "agent")
TOOL_STEP_TYPES = ("action",)
VARIABLE_TYPES = {
    "string": "string",
    "number": "number",
    "integer": "integer",
    "boolean": "boolean",
    "object": "object",
    "array": "array",
    "any": None,
}
DEFAULT_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class VariableDef:
    name: str
    type: str = "any"
    default: Any = None
    has_default: bool = False
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class StepDef:
    id: str
    type: str
    name: str = ""
    tool: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    depends_on: tuple[str, ...] = ()
    # depends_on plus every step whose output this step's templates or conditions read
    requires: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = 0
    retry_backoff_s: float = 1.0
    when: str | None = None
    requires_clarification: bool = False
    clarification_question: str | None = None
    on_reject: str = "ask"
    condition: str | None = None  # decision, validation
    then: tuple[str, ...] = ()  # decision: steps run when the condition is true
    otherwise: tuple[str, ...] = ()  # decision: steps run when it is false ("else" in definitions)
    schema: dict[str, Any] | None = None  # validation: JSON Schema for `target`
    target: str | None = None  # validation: expression whose value is checked against `schema`
    question: str | None = None  # human_input
    approval: ApprovalSpec | None = None  # approval: approvers, quorum, separate duties, timeout, message
    # action, human_input: a person's deadline at the step's gate (its own, or the workflow's default); None: none
    human_timeout: HumanTimeout | None = None
    agent: AgentSpec | None = None  # agent: goal, tools, limits, model, output_schema (core/agent)
    extra: dict[str, Any] = field(default_factory=dict)  # type-specific fields of later step types


@dataclass(frozen=True)
class WorkflowDef:
    name: str
    steps: tuple[StepDef, ...]
    description: str = ""
    variables: dict[str, VariableDef] = field(default_factory=dict)
    order: tuple[str, ...] = ()  # a topological order of step ids
    source: dict[str, Any] = field(default_factory=dict)  # the normalised definition, for storage

    def step(self, step_id: str) -> StepDef:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    @property
    def step_ids(self) -> list[str]:
        return [s.id for s in self.steps]
