"""The built-in tools, and the registry that also picks up third-party tools from entry points.

A package adds tools by declaring, for example::

    [project.entry-points."coach.tools"]
    weather = "coach_weather:WeatherTool"      # a class taking settings
    ping = "coach_ping:tool"                   # or a ready Tool object
"""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import logging
from typing import Any

from config import Settings
from core.tools import Tool, ToolRegistry

from .basic import EchoTool, NoopTool
from .files import FileReadTool, FileWriteTool
from .http import HttpRequestTool
from .shell import ShellRunTool
from .sql import SqlQueryTool
from .tenancy import IdsOnly, Workspaces

ENTRY_POINT_GROUP = "coach.tools"

log = logging.getLogger(__name__)

__all__ = [
    "ENTRY_POINT_GROUP",
    "EchoTool",
    "FileReadTool",
    "FileWriteTool",
    "HttpRequestTool",
    "IdsOnly",
    "NoopTool",
    "ShellRunTool",
    "SqlQueryTool",
    "Workspaces",
    "build_registry",
    "builtin_tools",
    "is_builtin",
]


def builtin_tools(settings: Settings, workspaces: Workspaces | None = None) -> list[Tool]:
    """`workspaces` tells the tools a workspace's slug and outbound lists (the server passes its database's)."""
    return [
        NoopTool(),
        EchoTool(),
        HttpRequestTool(settings, workspaces),
        SqlQueryTool(settings, workspaces),
        FileReadTool(settings),
        FileWriteTool(settings),
        ShellRunTool(settings),
    ]


def is_builtin(tool: Any) -> bool:
    """Whether a registered tool is one of Coach's own (this package's), not a plugin's."""
    return type(tool).__module__.startswith("services.tools")


def _looks_like_tool(obj: Any) -> bool:
    # A class has these as class attributes too, but its `run` is unbound: it still needs building.
    return not inspect.isclass(obj) and all(
        hasattr(obj, attr) for attr in ("name", "description", "params_schema", "risk", "run")
    )


def _load_entry_point(ep: Any, settings: Settings) -> Tool:
    obj = ep.load()
    if not _looks_like_tool(obj):
        if not callable(obj):
            raise TypeError(f"{obj!r} is neither a tool nor a callable returning one")
        obj = obj(settings)
    if not _looks_like_tool(obj):
        raise TypeError(f"{obj!r} lacks name/description/params_schema/risk/run")
    return obj


@functools.cache
def tool_entry_points() -> tuple:
    """The installed plugins' tool entry points, read once per process: scanning every installed distribution's
    metadata costs ~0.05 s, and installing a plugin needs a restart anyway."""
    return tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def build_registry(settings: Settings, workspaces: Workspaces | None = None) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in builtin_tools(settings, workspaces):
        registry.register(tool)
    builtin_names = set(registry.names())

    for ep in tool_entry_points():
        # One broken plugin must not keep the server from starting, so every failure is skipped.
        try:
            tool = _load_entry_point(ep, settings)
            if tool.name in builtin_names:
                # Replacing e.g. file.read would silently drop its confinement; refuse instead.
                raise ValueError(f"name {tool.name!r} is taken by a built-in tool")
            registry.register(tool)
        except Exception as exc:
            log.warning("skipping tool entry point %r (%s): %s", ep.name, getattr(ep, "value", "?"), exc)
    return registry
