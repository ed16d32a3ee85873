"""A scope's regions stored, listed with their evidence, and changed by leads (docs/autonomy.md#regions): the rules
(checking a condition, where a call falls, each condition version's share of the level) are core/regions.

A scope is a workflow's tool step (`step`, keyed `<workflow_id>/<step_id>`; an agent step's calls of one tool:
`<agent step>:<tool>`) or a gateway tool (`gateway`, keyed by the tool). Every change runs under the workspace's
lock (services.audit.service.lock_workspace), is audited, and happens in the caller's transaction."""

from __future__ import annotations

from typing import Any, TypeGuard

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.coaching import autonomy
from core.coaching.levels import LevelThresholds
from core.coaching.metrics import MetricsState, should_demote
from core.errors import NotFound
from core.regions import evidence as E
from core.regions import region as R
from services.audit import service as audit
from services.audit.service import lock_workspace
from services.metrics import service as metrics
from services.models.regions import Region, RegionScope
from services.orm import utcnow
from services.unit_of_work import UnitOfWork

STEP, GATEWAY = "step", "gateway"
EVIDENCE, SPOT = "region", "region_spot"  # the metric scopes of a condition version's decisions and spot checks


def evidence_key(region_id: str, version: int) -> str:
    return f"{region_id}/v{version}"


def step_key(workflow_id: str, step_id: str) -> str:
    return f"{workflow_id}/{step_id}"


def as_region(row: Region) -> R.Region:
    return R.Region(
        id=row.id,
        name=row.name,
        when=row.when,
        order=row.order,
        mode=row.mode,
        identity=row.identity,
        condition_version=row.condition_version,
    )


def _changed(session: Session) -> None:
    """A region was created, changed or deleted in this transaction: the step regions its unit of work read
    (step_regions) are read again."""
    uow = UnitOfWork.of(session)
    if uow is not None:
        uow.step_regions.clear()


def rows_of(session: Session, workspace_id: str, scope: str, scope_key: str) -> list[Region]:
    found = session.scalars(
        select(Region).where(Region.workspace_id == workspace_id, Region.scope == scope, Region.scope_key == scope_key)
    )
    return sorted(found, key=lambda r: (r.order, r.id))


def regions_of(session: Session, workspace_id: str, scope: str, scope_key: str) -> list[R.Region]:
    """The scope's regions as the router sees them, in their order (one indexed read)."""
    return [as_region(row) for row in rows_of(session, workspace_id, scope, scope_key)]


def get(session: Session, workspace_id: str, region_id: str) -> Region:
    row = session.get(Region, region_id)
    if row is None or row.workspace_id != workspace_id:
        raise NotFound(f"region {region_id} not found")
    return row


def _next_version(session: Session, workspace_id: str, scope: str, scope_key: str) -> int:
    """The scope's next condition version (j), counted under the workspace's lock: never reused."""
    counter = session.scalar(
        select(RegionScope).where(
            RegionScope.workspace_id == workspace_id, RegionScope.scope == scope, RegionScope.scope_key == scope_key
        )
    )
    if counter is None:
        counter = RegionScope(workspace_id=workspace_id, scope=scope, scope_key=scope_key, versions=0)
        session.add(counter)
    counter.versions += 1
    return counter.versions


def _described(row: Region) -> dict[str, Any]:
    return {
        "name": row.name,
        "when": row.when,
        "order": row.order,
        "mode": row.mode,
        "identity": row.identity,
        "condition_version": row.condition_version,
    }


def create(
    session: Session,
    workspace_id: str,
    actor: str,
    scope: str,
    scope_key: str,
    fields: dict[str, Any],
    *,
    workflow_id: str | None = None,
    step_id: str | None = None,
    tool: str | None = None,
) -> Region:
    """A new region (fields checked by core.regions.region.check_region); 422 past MAX_REGIONS in the scope."""
    lock_workspace(session, workspace_id)
    existing = (
        session.scalar(
            select(func.count())
            .select_from(Region)
            .where(Region.workspace_id == workspace_id, Region.scope == scope, Region.scope_key == scope_key)
        )
        or 0
    )
    R.check_count(existing)
    if "order" not in fields:  # after the scope's last region
        last = session.scalar(
            select(func.max(Region.order)).where(
                Region.workspace_id == workspace_id, Region.scope == scope, Region.scope_key == scope_key
            )
        )
        fields = {**fields, "order": (last + 1) if last is not None else 0}
    now = utcnow()
    row = Region(
        workspace_id=workspace_id,
        scope=scope,
        scope_key=scope_key,
        workflow_id=workflow_id,
        step_id=step_id,
        tool=tool,
        identity=fields.get("identity"),
        name=fields["name"],
        when=fields["when"],
        order=fields["order"],
        mode=fields.get("mode", autonomy.COACHING),
        condition_version=_next_version(session, workspace_id, scope, scope_key),
        created_by=actor,
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    _changed(session)
    audit.record(
        session,
        workspace_id,
        actor,
        "region_create",
        target_type="region",
        target_id=row.id,
        after={"scope": scope, "scope_key": scope_key, **_described(row)},
    )
    return row


def update(session: Session, workspace_id: str, actor: str, region_id: str, fields: dict[str, Any]) -> Region:
    """A PATCH: a changed condition is a new condition version (its evidence starts again, and an AUTO region goes
    back to coaching: nothing backs its promotion any more)."""
    lock_workspace(session, workspace_id)
    row = get(session, workspace_id, region_id)
    before = _described(row)
    if "when" in fields and fields["when"] != row.when:
        row.when = fields["when"]
        row.condition_version = _next_version(session, workspace_id, row.scope, row.scope_key)
        if row.mode == autonomy.AUTO and "mode" not in fields:
            row.mode = autonomy.COACHING
    for key in ("name", "order", "mode", "identity"):
        if key in fields:
            setattr(row, key, fields[key])
    row.updated_at = utcnow()
    _changed(session)
    audit.record(
        session,
        workspace_id,
        actor,
        "region_update",
        target_type="region",
        target_id=row.id,
        before=before,
        after=_described(row),
    )
    return row


def delete(session: Session, workspace_id: str, actor: str, region_id: str) -> None:
    lock_workspace(session, workspace_id)
    row = get(session, workspace_id, region_id)
    audit.record(
        session,
        workspace_id,
        actor,
        "region_delete",
        target_type="region",
        target_id=row.id,
        before={"scope": row.scope, "scope_key": row.scope_key, **_described(row)},
    )
    session.delete(row)
    _changed(session)


def set_mode(
    session: Session,
    workspace_id: str,
    actor: str,
    region_id: str,
    mode: str,
    *,
    force: bool,
    reason: str | None,
    thresholds: LevelThresholds,
) -> Region:
    """A lead's promotion (409 unless the region's own evidence says AUTO-ready; an admin may force it with a
    reason: the route checks the role), pin (`always_review`) or return to coaching, as for a step."""
    lock_workspace(session, workspace_id)
    row = get(session, workspace_id, region_id)
    reason = autonomy.check_force(force, reason)
    ready = state_of(session, row, thresholds).assess().auto_ready
    autonomy.check_step_mode(row.mode, mode, auto_ready=ready, force=force)
    before = row.mode
    row.mode, row.updated_at = mode, utcnow()
    _changed(session)
    audit.record(
        session,
        workspace_id,
        actor,
        "region_mode",
        target_type="region",
        target_id=row.id,
        before={"mode": before},
        after={
            "mode": mode,
            "auto_ready": ready,
            "forced": bool(force and not ready),
            **({"reason": reason} if reason else {}),
        },
        result="forced" if force and not ready else "ok",
    )
    return row


def state_of(session: Session, row: Region, thresholds: LevelThresholds) -> MetricsState:
    """The region's readiness evidence (its condition version's decisions), at its share of the scope's level."""
    return metrics.load(
        session,
        row.workspace_id,
        EVIDENCE,
        evidence_key(row.id, row.condition_version),
        E.region_thresholds(thresholds, row.condition_version),
    )


def view(session: Session, row: Region, thresholds: LevelThresholds) -> dict[str, Any]:
    """A region as the API shows it: its fields and its evidence (a step's snapshot figures, with its share)."""
    state = state_of(session, row, thresholds)
    spot = metrics.load(session, row.workspace_id, SPOT, evidence_key(row.id, row.condition_version), thresholds)
    snap = E.region_snapshot(state, row.condition_version, thresholds.auto_alpha)
    snap["decisions_needed"] = autonomy.decisions_needed(snap.pop("metrics"))
    body = {
        "id": row.id,
        "name": row.name,
        "when": row.when,
        "order": row.order,
        "mode": row.mode,
        "scope": row.scope,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        **snap,
        "spot_checks": {"decisions": spot.snapshot()["decisions"], "acceptance": spot.snapshot()["acceptance_rate"]},
    }
    if row.scope == STEP:
        body.update(workflow_id=row.workflow_id, step_id=row.step_id)
    else:
        body.update(tool=row.tool, identity=row.identity)
    return body


def check_unchanged(row: Region | None, version: int | None) -> TypeGuard[Region]:
    """Whether a suggestion's region is still the one it fell in (same condition version): only then its decision
    is that version's evidence."""
    return row is not None and version is not None and row.condition_version == version


def demote(session: Session, row: Region, spot: MetricsState, thresholds: LevelThresholds) -> str:
    """Spot checks show the region's acceptance below the bar: it goes back to coaching and its readiness evidence
    starts again (as a demoted step's: AUTO-ready only on new evidence); returns the reason, audited."""
    key = evidence_key(row.id, row.condition_version)
    for held in metrics.held_states(
        session,
        row.workspace_id,
        [(EVIDENCE, key), (SPOT, key)],
        E.region_thresholds(thresholds, row.condition_version),
    ).values():
        held.restart_evidence()
    row.mode, row.updated_at = autonomy.COACHING, utcnow()
    _changed(session)
    reason = (
        f"spot checks show acceptance below {thresholds.auto_acceptance:.0%} in region {row.name!r} "
        f"(spot-check acceptance {spot.window.rate:.0%}, test at level {thresholds.auto_alpha:g})"
    )
    audit.record(
        session,
        row.workspace_id,
        "system",
        "region_demotion",
        target_type="region",
        target_id=row.id,
        before={"mode": autonomy.AUTO},
        after={"mode": autonomy.COACHING, "reason": reason},
    )
    return reason


def count(
    session: Session,
    region_id: str | None,
    version: int | None,
    kind: str,
    latency_ms: float,
    thresholds: LevelThresholds,
    *,
    spot_check: bool,
    evidence: bool = True,
    attentive: bool = False,
) -> tuple[Region, str | None] | None:
    """A decision on a call that fell in region `region_id` (condition version `version`), counted for that version
    (not when the condition changed since: that version's evidence is gone); a spot check of an AUTO region also
    counts for its spot-check test, which may demote it (the reason is returned). None when the call is in no
    (current) region. `evidence` False: not in its readiness test (an operator below the lead's bars, where the
    workspace takes evidence from attentive operators only); its spot checks take every decision."""
    if region_id is None:
        return None
    row = session.get(Region, region_id)
    if not check_unchanged(row, version):
        return None
    key = evidence_key(row.id, row.condition_version)
    metrics.record_decision(
        session,
        row.workspace_id,
        [(EVIDENCE, key)],
        kind,
        latency_ms,
        E.region_thresholds(thresholds, row.condition_version),
        levels=(),
        left_out=() if evidence else [(EVIDENCE, key)],
        attentive=attentive,
    )
    if not spot_check:
        return row, None
    spot = metrics.record_decision(session, row.workspace_id, [(SPOT, key)], kind, latency_ms, thresholds, levels=())[
        (SPOT, key)
    ][0]
    if row.mode == autonomy.AUTO and should_demote(spot, thresholds):
        return row, demote(session, row, spot, thresholds)
    return row, None


def count_suggestion(
    uow: UnitOfWork,
    sug,
    kind: str,
    latency_ms: float,
    thresholds: LevelThresholds,
    *,
    evidence: bool = True,
    attentive: bool = False,
) -> bool:
    """A decision on a suggested call counted for the region it fell in (if any, and still that version); a
    demotion pushed. True when it was a spot check of an AUTO region (its step's demotion test leaves it out).
    `evidence`, `attentive`: as count's."""
    spot = sug.purpose == "spot_check"
    if sug.region_id is not None:
        # its workflow's step regions, which the drive's gates and the next suggestion read anyway: the region's row
        # comes with them into the identity map, where count's get finds it
        step_regions(uow.session, sug.workspace_id, sug.workflow_id)
    counted = count(
        uow.session,
        sug.region_id,
        sug.region_version,
        kind,
        latency_ms,
        thresholds,
        spot_check=spot,
        evidence=evidence,
        attentive=attentive,
    )
    if counted is None:
        return False
    row, reason = counted
    counted_event(uow, row, reason)
    return spot and (reason is not None or row.mode == autonomy.AUTO)


def counted_event(uow: UnitOfWork, row: Region, reason: str | None) -> None:
    """After a count: a demotion is pushed (`region_changed`, action `demoted`)."""
    if reason is not None:
        uow.events.add(
            "region_changed",
            {
                "region_id": row.id,
                "action": "demoted",
                "scope": row.scope,
                "workflow_id": row.workflow_id,
                "step_id": row.step_id,
                "tool": row.tool,
                "mode": row.mode,
                "previous_mode": autonomy.AUTO,
                "reason": reason,
            },
            workspace=row.workspace_id,
        )


def gateway_match(
    session: Session, workspace_id: str, tool: str, agent: str, arguments: Any, context: dict[str, Any]
) -> R.Match | None:
    """Where a gateway call falls among its tool's regions (None: the tool has none)."""
    scope = regions_of(session, workspace_id, GATEWAY, tool)
    if not scope:
        return None
    return R.region_for(scope, arguments, tool=tool, identity=agent, context=context)


def held_ref(match: R.Match | None) -> dict[str, Any] | None:
    """What a held gateway call's review keeps of its region (in its policy verdict's `region`), to count its
    decision there: {id, version, name, mode}."""
    if match is None or match.region is None:
        return None
    r = match.region
    return {"id": r.id, "version": r.condition_version, "name": r.name, "mode": r.mode}


def step_regions(session: Session, workspace_id: str, workflow_id: str) -> dict[str, list[R.Region]]:
    """A workflow's step regions by step (`<step>` or `<agent step>:<tool>`), each list in its order (as regions_of
    gives a step's): one read per unit of work (its `step_regions`), however many steps' gates and suggestions ask
    (a decision's drive takes its gate once per step it takes, then opens the next suggestion), dropped when a
    region changes in it (`_changed`). A session outside any unit of work reads each time."""
    uow = UnitOfWork.of(session)
    if uow is None:
        return _step_regions(session, workspace_id, workflow_id)
    key = (workspace_id, workflow_id)
    if key not in uow.step_regions:
        uow.step_regions[key] = _step_regions(session, workspace_id, workflow_id)
    return uow.step_regions[key]


def _step_regions(session: Session, workspace_id: str, workflow_id: str) -> dict[str, list[R.Region]]:
    found: dict[str, list[R.Region]] = {}
    for row in session.scalars(
        select(Region).where(
            Region.workspace_id == workspace_id, Region.scope == STEP, Region.workflow_id == workflow_id
        )
    ):
        if row.step_id is not None:  # (a step region always names its step)
            found.setdefault(row.step_id, []).append(as_region(row))
    return {step: R.ordered(regions) for step, regions in found.items()}


def stamp(sug, match: R.Match) -> None:
    """The suggestion remembers the region its call fell in (its decision counts there)."""
    region = match.region
    sug.region_id = region.id if region is not None else None
    sug.region_version = region.condition_version if region is not None else None


def ref(session: Session, sug) -> dict[str, Any] | None:
    """What a suggestion says of its region: {id, name, mode} or None."""
    if sug.region_id is None:
        return None
    row = session.get(Region, sug.region_id)
    if row is None:
        return None
    return {"id": row.id, "name": row.name, "mode": row.mode, "current": row.condition_version == sug.region_version}
