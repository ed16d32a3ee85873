"""Every concept's models loaded together, so that `Base.metadata` holds every table (Alembic's env, the tests'
schema) and each mapper finds the others. Code imports a model from its concept: `services/<concept>/models.py`."""

from __future__ import annotations

from services.agents import models as agents
from services.approvals import models as approvals
from services.audit import models as audit
from services.coaching import models as coaching
from services.coaching import undo_models as coaching_undo
from services.executions import models as executions
from services.gateway import models as gateway
from services.metrics import models as metrics
from services.notifications import models as notifications
from services.orm import Base
from services.plans import models as plans
from services.policies import models as policies
from services.regions import models as regions
from services.slack import models as slack
from services.toolservers import models as toolservers
from services.triggers import models as triggers
from services.users import models as users
from services.workflows import models as workflows

CONCEPTS = (
    agents,
    approvals,
    audit,
    coaching,
    coaching_undo,
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
