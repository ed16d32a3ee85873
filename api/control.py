"""Interactive control, one implementation under two route names: `/api/executions/<execution_id>/...` and
`/api/plans/<plan_id>/...` (a plan id is an execution id): pause, apply-correction, resume, execution-state.
The socket events (api/sockets.py) call the same functions."""

from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.context import operator, require, services, workspace_id
from api.schemas import Shape, map_of, one_of
from core.execution import states as S
from services.orchestration import control


class PauseArgs(Schema):
    step_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    question = fields.String(
        load_default=None,
        allow_none=True,
        validate=[
            validate.Length(max=10_000),
            # a clarification pause with "" or "   " would stop the run on a question nobody can answer
            validate.Predicate("strip", error="must not be empty: ask what needs clarifying, or leave it out"),
        ],
    )


class CorrectionArgs(Schema):
    step_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    correction = fields.Dict(
        required=True,
        metadata={"description": "{updated_step: {...}}: any of name, description, params, tool, timeout_s, retries"},
    )


class ResumeArgs(Schema):
    feedback = fields.Raw(
        load_default=None,
        allow_none=True,
        metadata={"description": "kept with the step; later templates read it as {{ feedback.<step_id> }}"},
    )


class LastResumeSchema(Shape):
    step_id = fields.String(allow_none=True)
    question = fields.String(allow_none=True)
    paused_at = fields.String(allow_none=True)
    resumed_at = fields.String(allow_none=True)
    feedback = fields.Raw(allow_none=True, metadata={"description": "free-form"})


class ExecutionStateSchema(Shape):
    execution_id = fields.String(required=True)
    state = one_of(S.STATES, required=True, metadata={"description": "the execution's status"})
    step_id = fields.String(allow_none=True)
    question = fields.String(allow_none=True)
    paused_at = fields.String(allow_none=True)
    feedback = fields.Raw(allow_none=True, metadata={"description": "free-form"})
    breakpoints = map_of(
        fields.String(),
        metadata={"description": "steps it will stop before, with the question"},
    )
    corrected_steps = fields.List(fields.String())
    feedbacks = fields.Dict(
        keys=fields.String(),
        values=fields.Raw(),
        metadata={"description": "step id -> the feedback given when resuming after it (free-form)"},
    )
    last_resume = fields.Nested(LastResumeSchema, allow_none=True)


def pause(execution_id: str, body: dict, plan: bool = False) -> dict:
    require("operator")
    svc = services()
    with svc.command() as uow:
        ex = control.pause(
            uow,
            svc.definitions,
            workspace_id(),
            execution_id,
            body["step_id"],
            body.get("question"),
            operator(),
            plan=plan,
        )
        answer = control.state(ex)
    return answer


def apply_correction(execution_id: str, body: dict, plan: bool = False) -> dict:
    require("operator")
    svc = services()
    with svc.command() as uow:
        ex = control.apply_correction(
            uow,
            svc.definitions,
            svc.tools.for_workspace(workspace_id()),
            workspace_id(),
            execution_id,
            body["step_id"],
            body["correction"],
            operator(),
            plan=plan,
        )
        answer = control.state(ex)
    return answer


def resume(execution_id: str, body: dict, plan: bool = False) -> dict:
    require("operator")
    svc = services()
    with svc.command() as uow:
        ex, run = control.resume(
            uow,
            svc.definitions,
            svc.tools.for_workspace(workspace_id()),
            workspace_id(),
            execution_id,
            body.get("feedback"),
            operator(),
            plan=plan,
        )
        if run:
            uow.run_next(execution_id)
        answer = control.state(ex)
    return answer


def read_state(execution_id: str, plan: bool = False) -> dict:
    with services().db.read() as session:
        return control.state(control.load(session, workspace_id(), execution_id, plan=plan))


def register(blp, id_name: str, *, plan: bool) -> None:
    """The four routes on `blp`, under `/<id_name>/...`."""
    name = "plan" if plan else "execution"

    @blp.route(f"/<{id_name}>/pause", endpoint=f"{name}_pause")
    class Pause(MethodView):
        @blp.arguments(PauseArgs)
        @blp.response(200, ExecutionStateSchema)
        def post(self, args, **ids):
            """Stop before a step (at once if it is the current one) in waiting_clarification"""
            return pause(ids[id_name], args, plan)

    @blp.route(f"/<{id_name}>/apply-correction", endpoint=f"{name}_apply_correction")
    class ApplyCorrection(MethodView):
        @blp.arguments(CorrectionArgs)
        @blp.response(200, ExecutionStateSchema)
        def post(self, args, **ids):
            """Change a step that has not run yet, for this execution only"""
            return apply_correction(ids[id_name], args, plan)

    @blp.route(f"/<{id_name}>/resume", endpoint=f"{name}_resume")
    class Resume(MethodView):
        @blp.arguments(ResumeArgs, required=False)  # no feedback: no body
        @blp.response(200, ExecutionStateSchema)
        def post(self, args, **ids):
            """Carry on after a clarification pause, with feedback"""
            return resume(ids[id_name], args, plan)

    @blp.route(f"/<{id_name}>/execution-state", endpoint=f"{name}_execution_state")
    class ExecutionState(MethodView):
        @blp.response(200, ExecutionStateSchema)
        def get(self, **ids):
            """{state, step_id, question, paused_at, feedback}"""
            return read_state(ids[id_name], plan)
