"""The shapes of an execution as the API answers them (GET /api/executions/<id>, the coaching and approval answers'
`execution`, an agent step's transcript): one nested, typed schema per object the server sends, with every status,
decision and kind an enum whose values come from the code that produces them (core/)."""

from __future__ import annotations

from marshmallow import fields

from api.policies import VerdictSchema
from api.schemas import RunVariables, Shape, StrictBoolean, ToolOutput, ToolParams, ToolSchema, one_of
from core import gates as G
from core.agent import conversation as C
from core.approvals import DECISIONS as APPROVAL_DECISIONS
from core.approvals import KINDS as APPROVAL_KINDS
from core.approvals import STATUSES as APPROVAL_STATUSES
from core.coaching.decisions import DECISIONS as COACHING_DECISIONS
from core.coaching.undo import HELD
from core.execution import states as S
from core.workflow.model import STEP_TYPES
from services.executions.service import MODES

# what a step's `decision` records: an operator's (core.coaching), an approval's (core.approvals), a deadline's
# (`timeout_<action>`, core.gates)
STEP_DECISIONS = (
    *dict.fromkeys((*COACHING_DECISIONS, *APPROVAL_DECISIONS, "approve", "reject")),
    *(f"timeout_{action}" for action in G.ACTIONS),
)
GATE_KINDS = (*G.KINDS, "clarification", "approval", HELD)


class ProgressSchema(Shape):
    done = fields.Integer(required=True)
    total = fields.Integer(required=True)
    percent = fields.Float(required=True)


class StepApprovalSchema(Shape):
    approval_id = fields.String(required=True)
    status = one_of(APPROVAL_STATUSES, required=True)
    kind = one_of(APPROVAL_KINDS, required=True)


class StepDefinitionSchema(Shape):
    """A step's fields that a correction may change (core.execution.control.CORRECTABLE), as written."""

    name = fields.String()
    description = fields.String()
    tool = fields.String()
    params = ToolParams(metadata={"description": "the tool's params as written (templates)"})
    timeout_s = fields.Float()
    retries = fields.Integer()


class StepResultSchema(Shape):
    step_id = fields.String(required=True)
    name = fields.String()
    type = one_of(STEP_TYPES, allow_none=True)
    tool = fields.String(allow_none=True)
    status = one_of(S.STEP_STATES, required=True)
    output = ToolOutput(allow_none=True, metadata={"description": "what the step's tool returned"})
    error = fields.String(allow_none=True)
    attempts = fields.Integer()
    params = ToolParams(allow_none=True, metadata={"description": "the params it ran (or runs) with"})
    decision = one_of(STEP_DECISIONS, allow_none=True)
    policy = fields.Nested(
        VerdictSchema,
        allow_none=True,
        metadata={
            "description": "the policy's verdict on the step's call when it was about to run, with its explanation"
        },
    )
    started_at = fields.DateTime(allow_none=True)
    finished_at = fields.DateTime(allow_none=True)
    run = fields.Integer(metadata={"description": "how many runs of its tool the step started (0: none yet)"})
    idempotency_key = fields.String(
        allow_none=True,
        metadata={
            "description": "the key of the step's current run of its tool: the same when the run is tried again (the "
            "step's retries, a re-run after a crash), another for another run; http.request sends it as "
            'the Idempotency-Key header (README "Effects")'
        },
    )
    approval = fields.Nested(
        StepApprovalSchema,
        allow_none=True,
        metadata={"description": "the step's latest approval (an approval step, a reviewed tool call)"},
    )
    definition = fields.Nested(
        StepDefinitionSchema,
        metadata={"description": "what apply-correction may change, as written, corrections included"},
    )
    params_schema = ToolSchema(allow_none=True, metadata={"description": "the JSON Schema of the step's tool's params"})
    transcript = fields.String(
        allow_none=True,
        metadata={"description": "an agent step: the path of its conversation (GET …/steps/<step_id>/transcript)"},
    )


class GateSchema(Shape):
    """What a waiting execution asks a person. Which fields are there depends on `kind`."""

    kind = one_of(GATE_KINDS, required=True)
    step_id = fields.String(required=True)
    suggestion_id = fields.String(metadata={"description": "decision, correction: the suggestion to decide"})
    tool_call_id = fields.String(metadata={"description": "an agent's call: its id, as the LLM named it"})
    approval_id = fields.String(metadata={"description": "approval: the approval to decide"})
    approval_kind = one_of(APPROVAL_KINDS)
    message = fields.String(metadata={"description": "approval: what the approvers are asked"})
    question = fields.String(allow_none=True, metadata={"description": "human_input, clarification"})
    paused_at = fields.String(metadata={"description": "human_input, clarification: when it began waiting (ISO)"})
    deadline = fields.String(
        allow_none=True, metadata={"description": "when on_timeout applies (ISO); null: none, or paused"}
    )
    on_timeout = one_of(G.ACTIONS)
    timeout_s = fields.Float()
    corrected = StrictBoolean(metadata={"description": "a correction was applied while paused"})
    agent = StrictBoolean(metadata={"description": "an agent step's own question or call"})
    suspended = fields.Nested(
        lambda: GateSchema(),
        allow_none=True,
        metadata={"description": "clarification: the gate the pause interrupted, back on resume"},
    )
    decision = one_of(
        (*COACHING_DECISIONS, *APPROVAL_DECISIONS),
        metadata={"description": "held: the decision held for its undo window (on a suggestion, or an approval's)"},
    )
    params_before = ToolParams(
        allow_none=True, metadata={"description": "held: an approval's edit: the params an undo puts back"}
    )
    operator = fields.String(metadata={"description": "held: who decided"})
    reopen = fields.Nested(
        lambda: GateSchema(),
        allow_none=True,
        metadata={"description": "held: the gate an undo puts back (deadline: when the held decision acts)"},
    )


class ExecutionErrorSchema(Shape):
    step_id = fields.String(allow_none=True)
    message = fields.String(required=True)
    approval_id = fields.String(
        metadata={"description": "the approval that failed it (a deadline with on_timeout: fail)"}
    )


class LeaseSchema(Shape):
    owner = fields.String(required=True, metadata={"description": "the instance running one of its steps"})
    expires_at = fields.String(allow_none=True, metadata={"description": "until when its lease holds unless renewed"})


class TriggerSchema(Shape):
    """The incoming webhook or cron schedule that started an execution (docs/triggers.md)."""

    kind = one_of(("webhook", "schedule"), required=True)
    name = fields.String(required=True)
    hook_id = fields.String(allow_none=True)
    delivery_id = fields.String(allow_none=True)
    schedule_id = fields.String(allow_none=True)
    fire_at = fields.String(allow_none=True, metadata={"description": "the schedule's slot, ISO 8601"})
    at = fields.String(allow_none=True, metadata={"description": "when it started the execution, ISO 8601"})


class ResumeOptionSchema(Shape):
    """A step a failed execution has not run, and whether "resume from" may choose it."""

    step_id = fields.String(required=True)
    allowed = StrictBoolean(required=True)
    reason = fields.String(
        allow_none=True,
        metadata={
            "description": "why it cannot be chosen (what POST …/resume-from would answer with 409); null when it can"
        },
    )
    skips = fields.List(fields.String(), metadata={"description": "the steps a resume from it skips"})


class ExecutionSchema(Shape):
    execution_id = fields.String(required=True)
    workflow_id = fields.String(required=True)
    workflow_version = fields.Integer(required=True)
    workflow_name = fields.String(allow_none=True, metadata={"description": "in lists: the workflow's current name"})
    mode = one_of(MODES, required=True)
    status = one_of(S.STATES, required=True)
    progress = fields.Nested(ProgressSchema, required=True)
    steps = fields.List(fields.Nested(StepResultSchema), required=True)
    is_coaching = StrictBoolean(required=True)
    variables = RunVariables(metadata={"description": "the run's variables, as the workflow declares them"})
    error = fields.Nested(ExecutionErrorSchema, allow_none=True, metadata={"description": "when the execution failed"})
    gate = fields.Nested(
        GateSchema,
        allow_none=True,
        metadata={
            "description": "what a human is asked, while waiting; with a deadline (human_timeout_s): its `deadline` "
            "(ISO), `on_timeout` and `timeout_s`"
        },
    )
    created_at = fields.DateTime()
    updated_at = fields.DateTime()
    started_at = fields.DateTime(allow_none=True)
    finished_at = fields.DateTime(allow_none=True)
    started_by = fields.String(allow_none=True, metadata={"description": "the user id of whoever started it"})
    trigger = fields.Nested(
        TriggerSchema,
        allow_none=True,
        metadata={"description": "how a trigger started it (GET by id); null when a person or a script started it"},
    )
    resume_from = fields.List(
        fields.Nested(ResumeOptionSchema),
        metadata={
            "description": "a failed execution: each step that has not run, in the definition's order, and whether "
            "resume-from may choose it (and why not); empty otherwise"
        },
    )
    lease = fields.Nested(
        LeaseSchema,
        allow_none=True,
        metadata={
            "description": "the instance running one of its steps, and until when its lease holds unless renewed; null "
            "when no step runs"
        },
    )


class ExecutionUpdateSchema(Shape):
    """Where the execution stands after a decision (the `execution_update` event without its steps)."""

    execution_id = fields.String(required=True)
    status = one_of(S.STATES, required=True)
    progress = fields.Nested(ProgressSchema, required=True)
    step_id = fields.String(allow_none=True, required=True)
    gate = fields.Nested(
        GateSchema, allow_none=True, metadata={"description": "when the execution stopped at the decided step"}
    )


class ToolCallSchema(Shape):
    """A call an assistant message asks for, as the LLM wrote it."""

    id = fields.String(required=True)
    name = fields.String(required=True)
    arguments = fields.String(required=True, metadata={"description": "JSON text, as the LLM sent it"})


class AgentMessageSchema(Shape):
    seq = fields.Integer(required=True)
    message_id = fields.String(allow_none=True)
    role = one_of((C.SYSTEM, C.USER, C.ASSISTANT, C.TOOL), required=True)
    content = fields.String(allow_none=True, required=True)
    turn = fields.Integer(
        required=True, metadata={"description": "the LLM turn that made it (assistant) or asked for it (tool)"}
    )
    kind = one_of((C.GOAL, C.ANSWER, C.APPROVED, C.REPAIR), allow_none=True, metadata={"description": "user messages"})
    tool_calls = fields.List(fields.Nested(ToolCallSchema), metadata={"description": "assistant"})
    reasoning = fields.String(allow_none=True)
    marker = fields.String(
        allow_none=True,
        metadata={"description": "assistant: CONFIRM_DATA | REQUEST_APPROVAL | STAGE_COMPLETE when its text holds one"},
    )
    asked = StrictBoolean()
    tool_call_id = fields.String(allow_none=True)
    name = fields.String(allow_none=True, metadata={"description": "tool: the name the LLM called"})
    tool = fields.String(allow_none=True, metadata={"description": "tool: the registered tool it names"})
    arguments = fields.Raw(
        allow_none=True, metadata={"description": "the call's arguments, as the LLM sent them (JSON)"}
    )
    raw_arguments = fields.String(allow_none=True, metadata={"description": "arguments that were not valid JSON"})
    params = ToolParams(allow_none=True, metadata={"description": "what ran (a learned rule or a correction applied)"})
    status = one_of((C.PENDING, C.REVIEW, C.READY, C.DONE), metadata={"description": "tool messages"})
    policy = fields.Nested(VerdictSchema, allow_none=True)
    decision = one_of(
        ("allow", "deny", "invalid", *COACHING_DECISIONS, *(f"timeout_{a}" for a in G.ACTIONS)),
        allow_none=True,
        metadata={"description": "tool: the policy's (allow, deny), invalid, or a person's decision"},
    )
    suggestion_id = fields.String(allow_none=True)
    source = fields.String(allow_none=True, metadata={"description": "llm | correction_pack:<id>"})
    error = StrictBoolean()
    trimmed = StrictBoolean(metadata={"description": "sent shortened to fit the step's context budget"})


class TranscriptSchema(Shape):
    execution_id = fields.String(required=True)
    step_id = fields.String(required=True)
    status = one_of(S.STEP_STATES, required=True, metadata={"description": "the step's status"})
    messages = fields.List(fields.Nested(AgentMessageSchema), required=True)
