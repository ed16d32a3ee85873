"""Leases on running steps (README "Several machines"): which instance runs a step of an execution, until when.

A step whose tool takes time is claimed, in the transaction that marks it running, with a lease on its execution
(`executions.lease_owner`, `lease_expires_at`; migration 0017): this instance's id and an expiry COACH_LEASE_S
ahead, renewed every third of that while the tool runs. A lease that expired, or whose instance is known to be
gone, may be taken over (services.orchestration.runner does, under the execution's row lock); a live one never is.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from datetime import datetime, timedelta

from sqlalchemy import and_, or_, select, update

from config import Settings
from core.execution import states as S
from services.db import Database, retrying, rowcount
from services.models.executions import Execution
from services.orm import table_of, utcnow
from services.unit_of_work import unit_of_work

log = logging.getLogger(__name__)

HOST = socket.gethostname()
_LIVE: set[str] = set()  # the ids of this process's lease holders, until they close


def owner_gone(owner: str) -> bool:
    """Whether the instance holding a lease is known to be gone before its lease runs out: a process of this host
    (the default id, host:pid:token) that no longer runs, or, in this process, a holder that closed."""
    host, _, rest = owner.partition(":")
    pid, _, token = rest.partition(":")
    if host != HOST or not pid.isdigit() or not token:
        return False
    if int(pid) == os.getpid():
        return owner not in _LIVE
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists (another user's process)
        return False
    return False


class Leases:
    """One instance's leases: its id (COACH_INSTANCE_ID, by default host:pid:random, which tells owner_gone which
    process of which host it is) and the steps it runs now (`held`: execution id -> step id), renewed by `renew`."""

    def __init__(self, db: Database, settings: Settings):
        self.db, self.lease_s = db, settings.lease_s
        self.owner = settings.instance_id or f"{HOST}:{os.getpid()}:{secrets.token_hex(4)}"
        self.held: dict[str, str] = {}
        _LIVE.add(self.owner)

    def close(self) -> None:
        _LIVE.discard(self.owner)

    def grant(self, ex: Execution, now: datetime | None = None) -> None:
        """The execution's lease becomes this instance's, for COACH_LEASE_S (in the caller's transaction)."""
        ex.lease_owner = self.owner
        ex.lease_expires_at = (now or utcnow()) + timedelta(seconds=self.lease_s)

    def release(self, ex: Execution) -> None:
        """No step of the execution runs here any more: its lease, if this instance's, ends."""
        if ex.lease_owner == self.owner:
            ex.lease_owner = ex.lease_expires_at = None

    def free(self, ex: Execution, now: datetime, at_start: bool = False) -> bool:
        """Whether the execution's running steps may be taken over: nobody's lease, an expired one, or one of an
        instance that is gone (at start, this instance's own id is its previous life's)."""
        owner = ex.lease_owner
        if owner is None or ex.lease_expires_at is None:
            return True
        if owner == self.owner:
            return at_start or (ex.lease_expires_at <= now and ex.id not in self.held)
        return ex.lease_expires_at <= now or owner_gone(owner)

    def renew(self) -> int:
        """Push back the expiry of the leases of the steps this instance runs now; returns how many it still holds
        (one taken over meanwhile is not renewed: its result will be dropped)."""
        held_now = list(self.held)
        if not held_now:
            return 0
        table = table_of(Execution)

        def once() -> int:
            with unit_of_work(self.db) as uow:
                return rowcount(
                    uow.session.execute(
                        update(table)
                        .where(table.c.id.in_(held_now), table.c.lease_owner == self.owner)
                        .values(lease_expires_at=utcnow() + timedelta(seconds=self.lease_s))
                    )
                )

        renewed = retrying(once, what="renewing leases")
        if renewed < len(held_now):
            log.warning(
                "%d of the leases of instance %s were taken over: their results will be dropped",
                len(held_now) - renewed,
                self.owner,
            )
        return renewed

    def to_take_over(self) -> list[str]:
        """Runnable executions another instance may take up now: those whose lease expired (or whose instance is
        gone), and those nobody holds that nothing moved for a lease's time (an instance died between a commit and
        its runner)."""
        now = utcnow()
        stale = now - timedelta(seconds=self.lease_s)
        with self.db.read() as session:
            rows = session.execute(
                select(Execution.id, Execution.lease_owner, Execution.lease_expires_at).where(
                    Execution.status.in_(list(S.RUNNABLE)),
                    or_(
                        Execution.lease_owner.is_not(None),
                        and_(Execution.lease_owner.is_(None), Execution.updated_at <= stale),
                    ),
                )
            ).all()
        found = []
        for execution_id, owner, expires in rows:
            if execution_id in self.held:
                continue
            if (
                owner is not None
                and expires is not None
                and expires > now
                and (owner == self.owner or not owner_gone(owner))
            ):
                continue
            found.append(execution_id)
        return found
