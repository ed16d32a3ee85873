"""Workflow definitions: create, version, read, delete; the demo.

service.py  definitions
demo.py     the demo workflows
models.py   Workflow, WorkflowVersion
"""
