"""services.db.Transaction: a transaction that makes the ORM Session only when something needs it. Rows loaded
without it are held detached and written at commit; once the Session is made they join it, one object per row."""
from __future__ import annotations

import threading

import pytest
from sqlalchemy import select

from services import executions, workflows
from services.db import _HOOKS, Transaction, held, on
from services.models import Execution, Workflow

WORKFLOW = {"name": "tx", "steps": [{"id": "s1", "tool": "echo", "params": {"message": "hi"}}]}


@pytest.fixture
def db(services):
    return services.db


@pytest.fixture
def execution_id(services):
    workspace = services.default_workspace_id()
    with services.db.transaction() as tx:
        wf = workflows.create(tx, services.tools, workspace, WORKFLOW)
        return executions.start(tx, services.definitions, workspace, wf.id, {}, "coaching").id


def _status(db, execution_id: str) -> tuple[str, int]:
    with db.read() as tx:
        return tx.execute(select(Execution.status, Execution.row_version).where(Execution.id == execution_id)).one()


def test_a_held_row_changed_without_the_orm_is_written_at_commit(db, execution_id):
    with db.transaction() as tx:
        ex = executions.get_any(tx, execution_id)
        before = ex.row_version
        ex.status = "cancelled"
        assert tx._orm is None  # loaded and changed without a Session
    assert tx._orm is None
    assert _status(db, execution_id) == ("cancelled", before + 1)


def test_rows_held_before_the_session_was_made_join_it_one_object_per_row(db, execution_id):
    with db.transaction() as tx:
        ex = executions.get_any(tx, execution_id)
        ex.status = "cancelled"
        same = tx.get(Execution, execution_id)  # the ORM Session is made here
        assert same is ex
        assert tx.scalar(select(Execution).where(Execution.id == execution_id)) is ex
        ex.error = {"message": "stopped"}
    status, version = _status(db, execution_id)
    assert status == "cancelled"
    with db.read() as tx:
        assert tx.get(Execution, execution_id).error == {"message": "stopped"}
        assert version == tx.get(Execution, execution_id).row_version


def test_an_object_loaded_by_the_session_is_the_one_held(db, execution_id):
    with db.transaction() as tx:
        wf_id = tx.get(Execution, execution_id).workflow_id
        assert held(tx, Workflow, wf_id) is tx.get(Workflow, wf_id)
        assert executions.get_any(tx, execution_id) is tx.get(Execution, execution_id)


def test_a_failed_block_writes_nothing_held_or_flushed(db, execution_id):
    with pytest.raises(RuntimeError):
        with db.transaction() as tx:
            executions.get_any(tx, execution_id).status = "cancelled"
            raise RuntimeError("after the change")
    assert _status(db, execution_id)[0] != "cancelled"


def test_before_commit_hooks_run_for_commits_only(db, execution_id):
    seen: list[int] = []
    hook = on("before_commit")(lambda tx: seen.append(id(tx)))
    try:
        with db.transaction() as committed:
            executions.get_any(committed, execution_id)
        closed = Transaction(db)
        executions.get_any(closed, execution_id)
        closed.close()  # neither committed nor rolled back
    finally:
        _HOOKS["before_commit"].remove(hook)
    assert seen == [id(committed)]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_read_does_not_hold_up_a_writer(db, execution_id):
    with db.read() as reader:
        assert executions.get_any(reader, execution_id, for_update=False).status == "pending"  # its snapshot
        done = threading.Event()

        def write():
            with db.transaction() as tx:
                executions.get_any(tx, execution_id).status = "cancelled"
            done.set()

        writer = threading.Thread(target=write)
        writer.start()
        assert done.wait(5), "the writer waited for a reader"
        writer.join()
        # the reader's snapshot is from before the write
        assert executions.get_any(reader, execution_id, for_update=False).status != "cancelled"
    assert _status(db, execution_id)[0] == "cancelled"
