"""A decision reads what it must once (issue #43): the workspace's review settings and the workflow's step regions
once per unit of work, though the decision (is it evidence), the drive's gate of each step it takes and the next
suggestion (is it a check, which region its call falls in) all ask; what the unit of work read is read again once a
setting or a region changes in it, and a new unit of work reads again."""

from __future__ import annotations

import threading

from sqlalchemy import event, select

from core.coaching.levels import LevelThresholds
from core.regions import region as R
from services.decisions import coaching as decisions
from services.executions import service as executions
from services.metrics import review_settings
from services.models.coaching import Suggestion
from services.regions import service as regions
from services.workflows import service as workflows

WORKFLOW = {
    "name": "reads",
    "steps": [{"id": f"s{i}", "tool": "echo", "params": {"message": f"step {i}"}} for i in range(3)],
}


def _pending(services, execution_id: str) -> Suggestion:
    services.runner.wait_idle(5)
    with services.db.read() as session:
        return session.scalars(
            select(Suggestion).where(Suggestion.execution_id == execution_id, Suggestion.status == "pending")
        ).one()


def _started(services) -> tuple[str, str, str]:
    """A coaching execution of WORKFLOW waiting at s0: (workspace, workflow id, execution id)."""
    workspace = services.default_workspace_id()
    with services.command() as uow:
        wf_id = workflows.create(uow.session, services.tools, workspace, WORKFLOW).id
        execution_id = executions.start(uow.session, services.definitions, workspace, wf_id, {}, "coaching").id
    services.runner.schedule(execution_id)
    return workspace, wf_id, execution_id


def _reads_of_a_decision(services, workspace: str, execution_id: str) -> list[str]:
    """The SELECTs of one accept (and the drive to the next gate, in its transaction), in this thread."""
    suggestion_id = _pending(services, execution_id).id
    me, statements = threading.get_ident(), []

    def seen(conn, cursor, statement, parameters, context, executemany):
        if threading.get_ident() == me:  # the decision's, not a scanner's that runs meanwhile
            statements.append(" ".join(statement.split()).upper())

    event.listen(services.db.engine, "before_cursor_execute", seen)
    try:
        decisions.submit(
            services, workspace, execution_id, {"suggestion_id": suggestion_id, "decision": "accept"}, "ann@coach.local"
        )
    finally:
        event.remove(services.db.engine, "before_cursor_execute", seen)
    return [s for s in statements if s.startswith("SELECT")]


def _from(reads: list[str], table: str) -> int:
    return sum(f" FROM {table.upper()} " in f"{s} " for s in reads)


def test_a_decision_reads_the_review_settings_and_the_step_regions_once(services):
    workspace, _, execution_id = _started(services)
    reads = _reads_of_a_decision(services, workspace, execution_id)
    # asked by the decision (is it evidence) and by the next suggestion (is it a check): a workspace at the
    # defaults has no row, which session.get does not remember
    assert _from(reads, "workspace_review_floor") == 1, reads
    # asked by the gate of s0 (run) and of s1 (stopped at), and by the suggestion opened there (its region)
    assert _from(reads, "regions") == 1, reads
    assert _pending(services, execution_id).step_id == "s1"


def test_the_once_read_settings_and_regions_are_the_ones_that_apply(services):
    """With checks on (the decision's operator judged, the next suggestion's check drawn) and a region on the next
    step, the reads are still one each, the next suggestion's call is stamped with its region, and its decision
    counted there."""
    workspace, wf_id, execution_id = _started(services)
    with services.command() as uow:
        review_settings.set_settings(uow.session, workspace, {"check_rate": 0.2}, "lead@coach.local")
        region = regions.create(
            uow.session,
            workspace,
            "lead@coach.local",
            regions.STEP,
            regions.step_key(wf_id, "s1"),
            R.check_region({"name": "every call", "when": "params.message != ''"}),
            workflow_id=wf_id,
            step_id="s1",
        )
        region_id = region.id
    reads = _reads_of_a_decision(services, workspace, execution_id)
    assert _from(reads, "workspace_review_floor") == 1, reads
    assert _from(reads, "regions") == 1, reads
    assert _pending(services, execution_id).region_id == region_id
    # the decision in the region: counted there (its row found among the workflow's step regions), one read still
    reads = _reads_of_a_decision(services, workspace, execution_id)
    assert _from(reads, "workspace_review_floor") == 1, reads
    assert _from(reads, "regions") == 1, reads
    with services.db.read() as session:
        row = regions.get(session, workspace, region_id)
        assert regions.state_of(session, row, LevelThresholds()).counters.counted == 1


def test_settings_set_and_regions_changed_in_a_unit_of_work_are_read_again_there(services):
    workspace, wf_id, _ = _started(services)
    with services.command() as uow:
        session = uow.session
        assert review_settings.get_floor(session, workspace)["check_rate"] == 0
        assert regions.step_regions(session, workspace, wf_id) == {}
        review_settings.set_settings(session, workspace, {"check_rate": 0.1}, "lead@coach.local")
        assert review_settings.get_floor(session, workspace)["check_rate"] == 0.1
        row = regions.create(
            session,
            workspace,
            "lead@coach.local",
            regions.STEP,
            regions.step_key(wf_id, "s2"),
            R.check_region({"name": "every call", "when": "params.message != ''"}),
            workflow_id=wf_id,
            step_id="s2",
        )
        session.flush()  # (the sessions do not autoflush: a query sees what was flushed)
        assert [(r.id, r.mode) for r in regions.step_regions(session, workspace, wf_id)["s2"]] == [(row.id, "coaching")]
        regions.update(session, workspace, "lead@coach.local", row.id, {"mode": "always_review"})
        assert [r.mode for r in regions.step_regions(session, workspace, wf_id)["s2"]] == ["always_review"]
        regions.delete(session, workspace, "lead@coach.local", row.id)
        session.flush()
        assert regions.step_regions(session, workspace, wf_id) == {}
        review_settings.get_floor(session, workspace)["check_rate"] = 1  # a copy: what it remembers is unchanged
        assert review_settings.get_floor(session, workspace)["check_rate"] == 0.1
    with services.command() as uow:  # a new unit of work reads them again
        assert uow.review_settings == {} and uow.step_regions == {}
        assert review_settings.get_floor(uow.session, workspace)["check_rate"] == 0.1


def test_an_agents_call_falls_in_the_regions_of_its_step_and_tool_read_with_the_workflows(services):
    """services.agents.service.region_of takes `<agent step>:<tool>`'s regions from the workflow's step regions (the
    one read its unit of work makes), as it took them from the scope's own read before."""
    from services.agents import service as agents

    workspace, wf_id, execution_id = _started(services)
    with services.command() as uow:
        row = regions.create(
            uow.session,
            workspace,
            "lead@coach.local",
            regions.STEP,
            regions.step_key(wf_id, "s0:echo"),
            R.check_region({"name": "hello", "when": "params.message == 'hello'"}),
            workflow_id=wf_id,
            step_id="s0:echo",
        )
        region_id = row.id
    with services.command() as uow:
        ex = executions.get_any(uow.session, execution_id, for_update=False)
        assert ex is not None
        hello = agents.region_of(uow.session, ex, "s0", "echo", {"message": "hello"})
        other = agents.region_of(uow.session, ex, "s0", "echo", {"message": "bye"})
        assert hello is not None and hello.region is not None and hello.region.id == region_id
        assert other is not None and other.region is None
        assert agents.region_of(uow.session, ex, "s0", "noop", {"message": "hello"}) is None  # no regions of its own
        assert agents.region_of(uow.session, ex, "s1", "echo", {"message": "hello"}) is None
