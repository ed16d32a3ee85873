"""Liveness, readiness and Prometheus metrics."""
from __future__ import annotations

from flask import Blueprint, Response, jsonify

from api.context import services
from services import prometheus

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


@blp.get("/metrics")
def prometheus_metrics():
    try:
        with services().db.read() as session:
            text = prometheus.exposition(session)
    except Exception:  # the scrape still answers, with coach_database_up 0
        text = prometheus.exposition(None)
    return Response(text, content_type=prometheus.CONTENT_TYPE)
