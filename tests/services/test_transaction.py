"""services.db: a unit of work is a plain SQLAlchemy Session. Changes are written at commit by the flush (with
the execution's version column checked), a failed block writes nothing, the identity map is the transaction's one
cache, and a read never holds up a writer."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import event, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from services.db import is_transient
from services.executions import service as executions
from services.models.executions import Execution
from services.models.workflows import Workflow
from services.workflows import service as workflows

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


def test_transaction_and_read_yield_plain_sessions(db):
    with db.transaction() as tx:
        assert isinstance(tx, Session)
    with db.read() as reader:
        assert isinstance(reader, Session)


def test_a_changed_row_is_written_at_commit_with_its_version_bumped(db, execution_id):
    before = _status(db, execution_id)[1]
    with db.transaction() as tx:
        executions.get_any(tx, execution_id).status = "cancelled"
    assert _status(db, execution_id) == ("cancelled", before + 1)


def test_a_row_read_twice_in_a_transaction_is_read_once(db, execution_id):
    statements: list[str] = []

    def seen(conn, cursor, statement, *args):
        statements.append(statement)

    with db.transaction() as tx:
        ex = executions.get_any(tx, execution_id, for_update=False)
        wf_id = ex.workflow_id
        tx.get(Workflow, wf_id)
        del ex  # the identity map keeps it for the transaction all the same
        event.listen(db.engine, "before_cursor_execute", seen)
        try:
            assert executions.get_any(tx, execution_id, for_update=False).id == execution_id
            assert tx.get(Workflow, wf_id).id == wf_id
        finally:
            event.remove(db.engine, "before_cursor_execute", seen)
    assert statements == []


def test_a_write_based_on_a_stale_read_fails_and_is_tried_again(db, execution_id):
    """The execution's row_version is the mapper's version_id_col: a write from a read another transaction changed
    meanwhile fails with StaleDataError, which retrying treats as transient."""
    with db.read() as reader:
        ex = reader.get(Execution, execution_id)  # kept after the session closes, as it was read
    with db.transaction() as tx:
        executions.get_any(tx, execution_id).status = "cancelled"
    with pytest.raises(StaleDataError) as failed:
        with db.transaction() as tx:
            tx.add(ex)
            ex.error = {"message": "written on an old copy"}
    assert is_transient(failed.value)
    assert _status(db, execution_id)[0] == "cancelled"


def test_a_failed_block_writes_nothing(db, execution_id):
    with pytest.raises(RuntimeError):
        with db.transaction() as tx:
            executions.get_any(tx, execution_id).status = "cancelled"
            tx.flush()
            raise RuntimeError("after the change")
    assert _status(db, execution_id)[0] != "cancelled"


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_read_does_not_hold_up_a_writer(db, execution_id):
    with db.read() as reader:
        assert _status_in(reader, execution_id) == "pending"  # its snapshot
        done = threading.Event()

        def write():
            with db.transaction() as tx:
                executions.get_any(tx, execution_id).status = "cancelled"
            done.set()

        writer = threading.Thread(target=write)
        writer.start()
        assert done.wait(5), "the writer waited for a reader"
        writer.join()
        assert _status_in(reader, execution_id) != "cancelled"  # the reader's snapshot is from before the write
    assert _status(db, execution_id)[0] == "cancelled"


def _status_in(session, execution_id: str) -> str:
    return session.scalar(select(Execution.status).where(Execution.id == execution_id))
