"""Fixtures shared by the core tests."""

import pytest

from core.tools import ToolRegistry
from tests.core.test_workflow_validation import Add, Echo


@pytest.fixture(scope="module")
def tools():
    registry = ToolRegistry()
    registry.register(Echo())
    registry.register(Add())
    return registry
