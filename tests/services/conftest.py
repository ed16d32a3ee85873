"""Fixtures shared by the services tests."""

import shutil

import pytest

from tests.services.test_metric_rows import Latest, services_on


@pytest.fixture
def two_processes(tmp_path, sqlite_template):
    """Two independent stacks (engines, pools, caches) on one SQLite file, as two server processes would be."""
    path = tmp_path / "coach.db"
    shutil.copy(sqlite_template, path)
    notifier = Latest()
    a = services_on(f"sqlite:///{path}", tmp_path, notifier)
    b = services_on(f"sqlite:///{path}", tmp_path, notifier)
    yield a, b, notifier
    a.close()
    b.close()
