"""Fixtures shared by the API tests."""

from __future__ import annotations

import pytest

from tests.conftest import Api, authed_client


@pytest.fixture
def make_api(settings):
    """Another app on the test's database with other settings (e.g. the spot-check rate)."""
    from api.app import create_app

    made = []

    def make(**overrides) -> Api:
        app = create_app(settings.with_overrides(**overrides), migrate=False)
        app.config["TESTING"] = True
        made.append(app.extensions["coach"])
        return Api(authed_client(app), app.extensions["coach"])

    yield make
    for svc in made:
        svc.runner.wait_idle(5)
        svc.close()
