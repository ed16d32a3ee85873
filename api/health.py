"""Liveness and readiness."""
from __future__ import annotations

from flask import Blueprint, jsonify

from api.context import services

blp = Blueprint("health", __name__)


@blp.get("/healthz")
def healthz():
    return jsonify({"status": "ok"})


@blp.get("/readyz")
def readyz():
    try:
        services().db.ping()
    except Exception as exc:  # the reason helps an operator; it holds no secret (the URL is not echoed)
        return jsonify({"status": "unavailable", "database": type(exc).__name__}), 503
    return jsonify({"status": "ready", "database": "ok"})
