"""flask-smorest pieces shared by every blueprint: the Api with Coach's error body, and a parser that
also reads YAML bodies (workflow definitions may be sent as application/yaml)."""
from __future__ import annotations

import flask_smorest
import yaml
from webargs import core
from webargs.flaskparser import FlaskParser, abort

from api.errors import error_response

YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")


class CoachParser(FlaskParser):
    def _raw_load_json(self, req):
        if req.mimetype in YAML_TYPES:
            try:
                return yaml.safe_load(req.get_data(cache=True)) if req.get_data(cache=True).strip() else core.missing
            except yaml.YAMLError as exc:
                abort(400, messages={"yaml": [f"Invalid YAML body: {exc}"]}, message="malformed YAML body")
        return super()._raw_load_json(req)

    def _handle_invalid_json_error(self, error, req, *args, **kwargs):
        abort(400, messages={"json": [f"Invalid JSON body: {error}"]}, message="malformed JSON body")


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = CoachParser()


class Api(flask_smorest.Api):
    def handle_http_exception(self, error):
        return error_response(error)
