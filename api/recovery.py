"""Recovery of a failed execution and a run's history, under /api/executions/<execution_id>/...:
retry (the failed step, same or edited params), resume-from (a step that has not run), rerun (a new execution),
history (every step's suggestions, decisions, questions and answers, approvals, retries).

Who may: an operator retries and resumes their workspace's failed runs (as they pause, correct and resume running
ones), and re-runs them; a re-run of a normal-mode execution needs the lead role, as starting one does (a normal run
skips the review the workflow is under). Anyone in the workspace reads a history."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.context import operator, require, requires, services, user_id, workspace_id
from api.execution_schemas import STEP_DECISIONS, ExecutionErrorSchema
from api.schemas import RunVariables, ToolParams, ValueChange, one_of
from core.execution import states as S
from core.execution.history import APPROVAL, DECIDED, EVENT_KINDS
from services.agents import llm_provider
from services.executions.service import MODES
from services.orchestration import history, recovery


class RetryArgs(Schema):
    step_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    params = ToolParams(
        load_default=None,
        allow_none=True,
        metadata={
            "description": "the params to run the step with instead (for this execution only), checked against its "
            "tool's schema once rendered (422 naming params.<field>); absent: the same params"
        },
    )


class ResumeFromArgs(Schema):
    step_id = fields.String(
        required=True,
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "a step that has not run; the failed steps, and those it waits for that have not run, are "
            "skipped"
        },
    )


class RerunArgs(Schema):
    variables = RunVariables(
        load_default=None,
        allow_none=True,
        metadata={
            "description": "the new execution's variables (all of them, checked as a start checks them); absent: the "
            "old execution's"
        },
    )


class RecoveredSchema(Schema):
    execution_id = fields.String(required=True)
    status = one_of(S.STATES, required=True)
    step_id = fields.String(
        allow_none=True, metadata={"description": "the step retried, or resumed from"}, required=True
    )
    run = fields.Integer(
        allow_none=True,
        metadata={
            "description": "retry: the run the step will be (its runs so far + 1); the run gets a new idempotency key"
        },
        required=True,
    )
    skipped = fields.List(fields.String(), metadata={"description": "resume-from: the steps skipped"}, required=True)


class RerunSchema(Schema):
    execution_id = fields.String(metadata={"description": "the new execution"}, required=True)
    rerun_of = fields.String(required=True)
    status = one_of(S.STATES, required=True)
    mode = one_of(MODES, required=True)
    workflow_version = fields.Integer(required=True)
    variables = RunVariables(required=True)


class HistoryChangeSchema(ValueChange):
    path = fields.String(required=True)
    change = fields.String(validate=validate.OneOf(("added", "removed", "changed")), required=True)


class HistoryEventSchema(Schema):
    kind = one_of(EVENT_KINDS, required=True)
    at = fields.DateTime(allow_none=True, required=True)
    step_id = fields.String(allow_none=True, required=True)
    actor = fields.String(
        allow_none=True, metadata={"description": "who: a person's email, coach, policy, system"}, required=True
    )
    text = fields.String(metadata={"description": "what happened, in words"}, required=True)
    decision = one_of(dict.fromkeys((*DECIDED, *APPROVAL, *STEP_DECISIONS)))
    comment = fields.String()
    reason = fields.String()
    question = fields.String(allow_none=True)
    answer = fields.Raw(allow_none=True)
    params = ToolParams()
    rationale = fields.String()
    source = fields.String()
    changes = fields.List(
        fields.Nested(HistoryChangeSchema), metadata={"description": "a correction's or retry's diff"}
    )
    run = fields.Integer()
    idempotency_key = fields.String()
    suggestion_id = fields.String()
    approval_id = fields.String()
    execution_id = fields.String(metadata={"description": "rerun: the new execution"})
    target_step = fields.String(metadata={"description": "resume_from: the step resumed from"})
    skipped = fields.List(fields.String())


class HistoryStepSchema(Schema):
    step_id = fields.String(required=True)
    name = fields.String(required=True)
    type = fields.String(required=True)
    tool = fields.String(allow_none=True, required=True)
    status = one_of(S.STEP_STATES, required=True)
    error = fields.String(allow_none=True, required=True)
    run = fields.Integer(metadata={"description": "runs of its tool started"}, required=True)
    attempts = fields.Integer(metadata={"description": "tries of its latest run"}, required=True)
    retries = fields.Integer(metadata={"description": "retries people asked for"}, required=True)
    started_at = fields.DateTime(allow_none=True, required=True)
    finished_at = fields.DateTime(allow_none=True, required=True)
    events = fields.List(fields.Nested(HistoryEventSchema), required=True)


class RunHistorySchema(Schema):
    execution_id = fields.String(required=True)
    status = one_of(S.STATES, required=True)
    error = fields.Nested(ExecutionErrorSchema, allow_none=True, required=True)
    rerun_of = fields.String(allow_none=True, metadata={"description": "the execution this one re-runs"}, required=True)
    reruns = fields.List(
        fields.String(), metadata={"description": "the executions that re-run this one"}, required=True
    )
    steps = fields.List(fields.Nested(HistoryStepSchema), required=True)
    events = fields.List(
        fields.Nested(HistoryEventSchema),
        metadata={"description": "the execution's own: start, coaching pauses, resume-from, cancel, re-runs"},
        required=True,
    )


def register(blp) -> None:
    @blp.route("/<execution_id>/retry")
    class Retry(MethodView):
        @requires("operator")
        @blp.arguments(RetryArgs)
        @blp.response(200, RecoveredSchema)
        def post(self, args, execution_id):
            """Run a failed execution's failed step again (a new attempt, with a new idempotency key)"""
            svc = services()
            params = recovery.UNCHANGED if args["params"] is None else args["params"]
            with svc.command() as uow:
                ex = recovery.retry(
                    uow,
                    svc.definitions,
                    svc.tools.for_workspace(workspace_id()),
                    workspace_id(),
                    execution_id,
                    args["step_id"],
                    params,
                    operator(),
                )
                uow.run_next(execution_id)
                body = {
                    "execution_id": ex.id,
                    "status": ex.status,
                    "step_id": args["step_id"],
                    "run": ex.steps[args["step_id"]].run + 1,
                    "skipped": [],
                }
            return body

    @blp.route("/<execution_id>/resume-from")
    class ResumeFrom(MethodView):
        @requires("operator")
        @blp.arguments(ResumeFromArgs)
        @blp.response(200, RecoveredSchema)
        def post(self, args, execution_id):
            """Go on with a failed execution from a step that has not run"""
            svc = services()
            with svc.command() as uow:
                ex = recovery.resume_from(
                    uow, svc.definitions, workspace_id(), execution_id, args["step_id"], operator()
                )
                uow.run_next(execution_id)
                body = {
                    "execution_id": ex.id,
                    "status": ex.status,
                    "step_id": args["step_id"],
                    "run": None,
                    "skipped": (ex.control or {})["retries"][-1]["skipped"],
                }
            return body

    @blp.route("/<execution_id>/rerun")
    class Rerun(MethodView):
        @requires("operator")
        @blp.arguments(RerunArgs, required=False)  # no body: the same variables
        @blp.response(201, RerunSchema)
        def post(self, args, execution_id):
            """Start the execution's workflow again, with the same (or edited) variables"""
            svc = services()
            with svc.command() as uow:
                old, new = recovery.rerun(
                    uow.session,
                    svc.definitions,
                    workspace_id(),
                    execution_id,
                    (args or {}).get("variables"),
                    operator(),
                    user_id(),
                    require,
                )
                # an agent step with no LLM provider: a 409 saying what to set, not a new run that fails
                llm_provider.require(
                    uow.session, svc.settings, workspace_id(), svc.definitions.for_execution(uow.session, new)
                )
                uow.run_next(new.id)
                body = {
                    "execution_id": new.id,
                    "rerun_of": old.id,
                    "status": new.status,
                    "mode": new.mode,
                    "workflow_version": new.workflow_version,
                    "variables": new.variables,
                }
            return body

    @blp.route("/<execution_id>/history")
    class History(MethodView):
        @blp.response(200, RunHistorySchema)
        def get(self, execution_id):
            """A run's history: per step its suggestions, decisions, questions and answers, approvals, retries"""
            svc = services()
            with svc.db.read() as session:
                return history.history(session, svc.definitions, workspace_id(), execution_id)
