"""Policies: rules in the database, each workspace's default and outbound lists, the evaluation the runner calls.

service.py   rules and their evaluation
outbound.py  outbound lists
models.py    Policy, PolicySettings, WorkspaceOutbound
"""
