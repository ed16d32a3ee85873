"""Interactive control, one implementation under two route names: `/api/executions/<execution_id>/...` and
`/api/plans/<plan_id>/...` (a plan id is an execution id): pause, apply-correction, resume, execution-state.
The socket events (api/sockets.py) call the same functions."""
from __future__ import annotations

from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.context import operator, require, services, workspace_id
from api.schemas import Shape, one_of
from core.execution import states as S
from services.executions import control
from services.notifier import Events


class PauseArgs(Schema):
    step_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    question = fields.String(load_default=None, allow_none=True, validate=[
        validate.Length(max=10_000),
        # a clarification pause with "" or "   " would stop the run on a question nobody can answer
        validate.Predicate("strip", error="must not be empty: ask what needs clarifying, or leave it out")])


class CorrectionArgs(Schema):
    step_id = fields.String(required=True, validate=validate.Length(min=1, max=64))
    correction = fields.Dict(required=True, metadata={
        "description": "{updated_step: {...}}: any of name, description, params, tool, timeout_s, retries"})


class ResumeArgs(Schema):
    feedback = fields.Raw(load_default=None, allow_none=True, metadata={
        "description": "kept with the step; later templates read it as {{ feedback.<step_id> }}"})


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
    breakpoints = fields.Dict(keys=fields.String(), values=fields.String(),
                              metadata={"description": "steps it will stop before, with the question"})
    corrected_steps = fields.List(fields.String())
    feedbacks = fields.Dict(keys=fields.String(), values=fields.Raw(), metadata={
        "description": "step id -> the feedback given when resuming after it (free-form)"})
    last_resume = fields.Nested(LastResumeSchema, allow_none=True)


def pause(execution_id: str, body: dict, plan: bool = False) -> dict:
    require("operator")
    svc, events = services(), Events()
    with svc.db.transaction() as session:
        ex = control.pause(session, svc.definitions, workspace_id(), execution_id, body["step_id"],
                           body.get("question"), operator(), events, plan=plan)
        answer = control.state(ex)
    svc.notifier.send(events)
    return answer


def apply_correction(execution_id: str, body: dict, plan: bool = False) -> dict:
    require("operator")
    svc, events = services(), Events()
    with svc.db.transaction() as session:
        ex = control.apply_correction(session, svc.definitions, svc.tools.for_workspace(workspace_id()), workspace_id(), execution_id,
                                      body["step_id"], body["correction"], operator(), events, plan=plan)
        answer = control.state(ex)
    svc.notifier.send(events)
    return answer


def resume(execution_id: str, body: dict, plan: bool = False) -> dict:
    require("operator")
    svc, events = services(), Events()
    with svc.db.transaction() as session:
        ex, run = control.resume(session, svc.definitions, svc.tools.for_workspace(workspace_id()), workspace_id(), execution_id,
                                 body.get("feedback"), operator(), events, plan=plan)
        answer = control.state(ex)
    svc.notifier.send(events)
    if run:
        svc.runner.schedule(execution_id)
    return answer


def read_state(execution_id: str, plan: bool = False) -> dict:
    with services().db.read() as session:
        return control.state(control.load(session, workspace_id(), execution_id, plan=plan))


# the POST routes: path, body schema, whether a body is required, the function, what it does (the OpenAPI summary)
COMMANDS = (
    ("pause", PauseArgs, True, pause,
     "Stop before a step (at once if it is the current one) in waiting_clarification"),
    ("apply-correction", CorrectionArgs, True, apply_correction,
     "Change a step that has not run yet, for this execution only"),
    ("resume", ResumeArgs, False, resume,  # no feedback: no body
     "Carry on after a clarification pause, with feedback"),
)


def register(blp, id_name: str, *, plan: bool) -> None:
    """The four routes on `blp`, under `/<id_name>/...`."""
    name = "plan" if plan else "execution"
    for path, args, required, command, summary in COMMANDS:
        blp.route(f"/<{id_name}>/{path}", endpoint=f"{name}_{path.replace('-', '_')}")(
            command_view(blp, id_name, plan, args, required, command, summary))

    @blp.route(f"/<{id_name}>/execution-state", endpoint=f"{name}_execution_state")
    class ExecutionState(MethodView):
        @blp.response(200, ExecutionStateSchema)
        def get(self, **ids):
            """{state, step_id, question, paused_at, feedback}"""
            return read_state(ids[id_name], plan)


def command_view(blp, id_name: str, plan: bool, args, required: bool, command, summary: str) -> type[MethodView]:
    """A view whose POST runs `command` on the id in the path with the body; `summary` is its OpenAPI summary."""
    def post(self, body, **ids):
        return command(ids[id_name], body, plan)

    post.__doc__ = summary
    post = blp.response(200, ExecutionStateSchema)(blp.arguments(args, required=required)(post))
    return type(command.__name__.title().replace("_", ""), (MethodView,), {"post": post})
