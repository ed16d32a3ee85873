"""Serves the built web app (frontend/dist) at `/`, with the SPA's routes falling back to index.html,
and Swagger UI's files for /api/docs from the swagger-ui-bundle package (no CDN needed)."""

from __future__ import annotations

from pathlib import Path

import swagger_ui_bundle
from flask import Blueprint, current_app, g, send_from_directory
from flask.blueprints import BlueprintSetupState
from werkzeug.routing import PathConverter

blp = Blueprint("frontend", __name__)


class SpaPath(PathConverter):
    """A path of the web app: anything but the API's and Socket.IO's. The SPA's catch-all must not match them at
    all: a GET on a POST-only API route would be the page's 404 (with `Allow: GET`) instead of routing's 405 naming
    the route's methods, and an unknown API path must be the API's JSON 404, not a page."""

    regex = r"(?!api/|socket\.io)" + PathConverter.regex


# before the routes below: a rule is compiled with the converters its map has when it is added
def _spa_path(state: BlueprintSetupState) -> None:
    state.app.url_map.converters.setdefault("spa_path", SpaPath)


blp.record_once(_spa_path)
SERVICE_WORKER = "sw.js"
PLACEHOLDER = """<!doctype html><meta charset="utf-8"><title>Coach</title>
<h1>Coach</h1><p>The web app is not built yet: run <code>make run</code> (or <code>make frontend</code>).</p>
<p>The API is at <a href="/api/docs">/api/docs</a>.</p>"""


@blp.get("/api/docs/assets/<path:filename>")
def swagger_assets(filename: str):
    return send_from_directory(swagger_ui_bundle.swagger_ui_path, filename, max_age=86400)


@blp.get("/", defaults={"path": ""})
@blp.get("/<spa_path:path>")
def spa(path: str):
    dist = Path(current_app.extensions["coach"].settings.frontend_dist)
    if path == SERVICE_WORKER and (dist / path).is_file():
        # the Web Push service worker (frontend/public/sw.js): as JavaScript, revalidated on every update check so a
        # new version is seen at once, controlling the whole app (scope /); the same for everyone, no cookie
        g.cookieless = True
        response = send_from_directory(dist, path, max_age=0, mimetype="text/javascript")
        response.headers["Service-Worker-Allowed"] = "/"
        return response
    if path and (dist / path).is_file():
        if not path.startswith("assets/"):
            return send_from_directory(dist, path, max_age=0)
        # Vite names these by their content: a name never gets other content, so the browser keeps the file for a
        # year without asking again, and the response is the same for everyone (no session cookie, see
        # security.SessionInterface)
        g.cookieless = True
        response = send_from_directory(dist, path, max_age=31536000)
        response.cache_control.immutable = True
        return response
    if (dist / "index.html").is_file():
        return send_from_directory(dist, "index.html", max_age=0)
    return PLACEHOLDER
