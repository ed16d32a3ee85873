"""Adapters that wire the core to the world: storage, runner, notifier, tools."""
