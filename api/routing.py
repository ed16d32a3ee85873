"""One resource per path: the methods a path has are those of the most specific route that matches it.

A fixed path and a parameterised one overlap: `/api/executions/coaching` (POST) is also `/api/executions/<id>`
(GET, DELETE), `/api/users/invitations` (GET) also `/api/users/<user_id>`. Werkzeug's router takes the fixed one
for the methods it has and falls through to the other for the rest, and lists the methods of both in `Allow`, so
`OPTIONS /api/executions/coaching` answered `Allow: GET, HEAD, OPTIONS, POST` and `GET` there was "execution
'coaching' not found". Here the path's resource is the route the router picks first for any method (every route
has OPTIONS), with the methods of every route written the same way: OPTIONS answers those, another method is 405
with those in `Allow` (api/errors.py), whichever route the router fell through to.
"""

from __future__ import annotations

from collections import defaultdict

from flask import Flask, current_app, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed


def register(app: Flask) -> None:
    """After the blueprints (the routes are all there) and after authentication (a 405 comes after a 401, as the
    router's own 405 does: Flask raises it when the before-request functions have run)."""
    methods: dict[str, set[str]] = defaultdict(set)  # a route's text -> the methods of the routes written so
    for rule in app.url_map.iter_rules():
        methods[rule.rule] |= rule.methods or set()

    def resource_methods() -> set[str] | None:
        adapter = current_app.create_url_adapter(request)  # (None only outside a request)
        if adapter is None:
            return None
        try:
            rule, _ = adapter.match(method="OPTIONS", return_rule=True)
        except HTTPException:  # no route (404), or one that redirects to its slash: nothing to say here
            return None
        return methods[rule.rule]

    @app.before_request
    def one_resource_per_path():
        rule, refused = request.url_rule, isinstance(request.routing_exception, MethodNotAllowed)
        if not refused and (rule is None or (not rule.arguments and request.method != "OPTIONS")):
            return None  # a 404, or a fixed route: nothing is more specific than it
        allowed = resource_methods()
        if allowed is None:
            return None
        if refused or request.method not in allowed:
            raise MethodNotAllowed(valid_methods=sorted(allowed))
        if request.method == "OPTIONS" and getattr(rule, "provide_automatic_options", False):
            response = current_app.response_class()  # what Flask's own OPTIONS answer is, with these methods
            response.allow.update(sorted(allowed))
            return response
        return None
