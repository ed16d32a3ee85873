"""Coach's tables: the models of every concept, one module each (`services.models.executions`, `.coaching`, ...).

The schema is one layer under every package of services/: any of them may import any model, and a model module
imports nothing of services/ but the declarative base (services.orm) and its column types. Loading this package
loads them all, so that `Base.metadata` holds every table (Alembic's env, the tests' schema) and each mapper finds
the others."""

from __future__ import annotations

from services.models import (
    agents,
    approvals,
    audit,
    coaching,
    executions,
    gateway,
    metrics,
    notifications,
    plans,
    policies,
    regions,
    slack,
    toolservers,
    triggers,
    undo,
    users,
    workflows,
)
from services.orm import Base

CONCEPTS = (
    agents,
    approvals,
    audit,
    coaching,
    undo,
    executions,
    gateway,
    metrics,
    notifications,
    plans,
    policies,
    regions,
    slack,
    toolservers,
    triggers,
    users,
    workflows,
)
metadata = Base.metadata
