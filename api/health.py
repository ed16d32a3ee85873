"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request
from prometheus_client.exposition import choose_encoder

from api.context import services
from services.metrics import prometheus

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
    # the text format a scraper asks for in Accept (OpenMetrics for Prometheus), else the classic 0.0.4 text
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    return Response(encode(prometheus.registry(services().db.read)), content_type=content_type)
