"""Executions: the state machine (one table) and the engine that decides what runs next."""
