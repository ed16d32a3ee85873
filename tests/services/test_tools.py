"""The built-in tools against real parts: a local HTTP server, a SQLite file, a temp data folder, real processes."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import logging
import os
import shutil
import socket
import stat
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from config import Settings
from core.tools import ToolContext, ToolError, schema_errors
from services.tools import ENTRY_POINT_GROUP, build_registry, tool_entry_points
from services.tools.basic import EchoTool, NoopTool
from services.tools.files import FileReadTool, FileWriteTool
from services.tools.http import HttpRequestTool
from services.tools.shell import ShellRunTool
from services.tools.sql import SqlQueryTool, json_safe

BUILTINS = {"noop", "echo", "http.request", "sql.query", "file.read", "file.write", "shell.run"}


WS = "w1"  # the workspace the tools run for in these tests


def ctx(budget_s: float | None = None, workspace_id: str = WS) -> ToolContext:
    return ToolContext(
        execution_id="e1",
        step_id="s1",
        deadline=None if budget_s is None else time.monotonic() + budget_s,
        workspace_id=workspace_id,
    )


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        instance_dir=str(tmp_path),
        shell_allow=("echo", "sleep"),
        sql_connections={
            "main": {"url": f"sqlite:///{tmp_path / 'test.db'}", "workspaces": [WS]},
            "other": {"url": "sqlite://", "workspaces": [WS, "w2"]},
        },
        outbound_allow=("127.0.0.1",),  # the test servers listen on loopback
    )


@pytest.fixture
def data_dir(settings: Settings) -> Path:
    """The folder of workspace WS, which the file tools and shell.run see."""
    path = Path(settings.resolved_data_dir) / WS
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- a real HTTP server --------------------------------------------------------------------

SLOW_S = 30  # how long /slow takes to answer unless the test ends first


class _Handler(BaseHTTPRequestHandler):
    release = threading.Event()  # lets teardown end a /slow request early

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Served-By", "TestServer")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _route(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if url.path == "/json":
            self._send(200, json.dumps({"hello": "world", "n": 3}).encode(), "application/json; charset=utf-8")
        elif url.path == "/echo":
            payload = {
                "method": self.command,
                "query": {k: v[0] for k, v in parse_qs(url.query).items()},
                "x_test": self.headers.get("X-Test"),
                "content_type": self.headers.get("Content-Type"),
                "body": body,
            }
            self._send(201, json.dumps(payload).encode(), "application/json")
        elif url.path == "/redirect":  # /redirect?to=<location>&status=302
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            self.send_response(int(query.get("status", 302)))
            self.send_header("Location", query["to"])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif url.path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif url.path == "/host":
            self._send(
                200,
                json.dumps({"host": self.headers.get("Host"), "method": self.command, "body": body}).encode(),
                "application/json",
            )
        elif url.path == "/text":
            self._send(200, "plain text é".encode(), "text/plain; charset=utf-8")
        elif url.path == "/big":
            self._send(200, b"x" * (100 * 1024), "text/plain")
        elif url.path == "/slow":
            self.release.wait(SLOW_S)
            self._send(200, b"late", "text/plain")
        else:
            self._send(404, json.dumps({"error": "not found"}).encode(), "application/json")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _route


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.release.clear()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    _Handler.release.set()
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def http_tool(settings: Settings) -> HttpRequestTool:
    return HttpRequestTool(settings)


def test_noop_returns_empty_object():
    assert NoopTool().run({"anything": 1}, ctx()) == {}


def test_echo_returns_a_copy_of_params():
    params = {"message": "hi", "nested": {"a": [1, 2]}}
    out = EchoTool().run(params, ctx())
    assert out == params
    out["nested"]["a"].append(3)
    assert params["nested"]["a"] == [1, 2]


def test_http_get_parses_json_response(http_tool, server):
    out = http_tool.run({"url": f"{server}/json"}, ctx())
    assert out["status"] == 200 and out["ok"] is True
    assert out["json"] == {"hello": "world", "n": 3}
    assert json.loads(out["text"]) == out["json"]
    assert out["headers"]["x-served-by"] == "TestServer"
    assert all(k == k.lower() for k in out["headers"])
    assert out["elapsed_ms"] >= 0
    json.dumps(out)


def test_http_post_sends_json_query_and_headers(http_tool, server):
    out = http_tool.run(
        {
            "method": "POST",
            "url": f"{server}/echo",
            "params": {"q": "coach"},
            "headers": {"X-Test": "yes"},
            "json": {"a": 1},
        },
        ctx(),
    )
    assert out["status"] == 201 and out["ok"] is True
    assert out["json"]["method"] == "POST"
    assert out["json"]["query"] == {"q": "coach"}
    assert out["json"]["x_test"] == "yes"
    assert out["json"]["content_type"] == "application/json"
    assert json.loads(out["json"]["body"]) == {"a": 1}


def test_http_put_sends_raw_body(http_tool, server):
    out = http_tool.run({"method": "PUT", "url": f"{server}/echo", "body": "raw data"}, ctx())
    assert out["json"]["method"] == "PUT" and out["json"]["body"] == "raw data"


def test_http_text_response_has_text_and_no_json(http_tool, server):
    out = http_tool.run({"url": f"{server}/text"}, ctx())
    assert out["text"] == "plain text é"
    assert out["json"] is None


def test_http_head_returns_status_without_body(http_tool, server):
    out = http_tool.run({"method": "HEAD", "url": f"{server}/json"}, ctx())
    assert out["status"] == 200 and out["text"] == "" and out["json"] is None


def test_http_non_2xx_is_reported_with_ok_false_not_raised(http_tool, server):
    out = http_tool.run({"url": f"{server}/nope"}, ctx())
    assert out["status"] == 404
    assert out["ok"] is False
    assert out["json"] == {"error": "not found"}


def test_http_large_text_is_truncated_to_64kb(http_tool, server):
    out = http_tool.run({"url": f"{server}/big"}, ctx())
    assert len(out["text"]) == 64 * 1024


def test_http_slow_endpoint_is_stopped_by_the_step_deadline(http_tool, server):
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out.*") as info:
        http_tool.run({"url": f"{server}/slow"}, ctx(0.3))
    assert time.monotonic() - started < SLOW_S  # the call was given up, not answered late
    assert f"{server}/slow" in str(info.value)


def test_http_timeout_s_param_bounds_the_call(http_tool, server):
    started = time.monotonic()
    with pytest.raises(ToolError, match="timed out after 0.3s"):
        http_tool.run({"url": f"{server}/slow", "timeout_s": 0.3}, ctx())
    assert time.monotonic() - started < SLOW_S  # the call was given up, not answered late


def test_http_connection_refused_raises_tool_error_naming_the_url(http_tool):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x"
    with pytest.raises(ToolError, match=f"GET {url}"):
        http_tool.run({"url": url}, ctx(5))


def test_http_refuses_non_http_urls(http_tool):
    with pytest.raises(ToolError, match="http:// or https://"):
        http_tool.run({"url": "file:///etc/passwd"}, ctx())


# --- SQL on a real SQLite file --------------------------------------------------------------


@pytest.fixture
def sql_tool(settings: Settings):
    tool = SqlQueryTool(settings)
    yield tool
    tool.close()


def _sql(tool: SqlQueryTool, query: str, budget_s: float | None = None, **params):
    return tool.run({"connection": "main", "query": query, **params}, ctx(budget_s))


def test_sql_creates_inserts_and_selects_with_bind_params(sql_tool):
    created = _sql(sql_tool, "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, age INTEGER)")
    assert created["rows"] == [] and created["columns"] == []
    for name, age in [("ada", 36), ("bob", 25), ("cy", 41)]:
        inserted = _sql(
            sql_tool, "INSERT INTO people (name, age) VALUES (:name, :age)", params={"name": name, "age": age}
        )
        assert inserted["rowcount"] == 1
    out = _sql(sql_tool, "SELECT name, age FROM people WHERE age > :min ORDER BY name", params={"min": 30})
    assert out["columns"] == ["name", "age"]
    assert out["rows"] == [{"name": "ada", "age": 36}, {"name": "cy", "age": 41}]
    assert out["rowcount"] == 2


def test_sql_update_reports_affected_rowcount(sql_tool):
    _sql(sql_tool, "CREATE TABLE t (x INTEGER)")
    _sql(sql_tool, "INSERT INTO t (x) VALUES (1), (2), (3)")
    assert _sql(sql_tool, "UPDATE t SET x = x * 10 WHERE x >= 2")["rowcount"] == 2


def test_sql_max_rows_limits_returned_rows(sql_tool):
    _sql(sql_tool, "CREATE TABLE t (x INTEGER)")
    _sql(sql_tool, "INSERT INTO t (x) VALUES (1), (2), (3), (4)")
    out = _sql(sql_tool, "SELECT x FROM t ORDER BY x", max_rows=2)
    assert out["rows"] == [{"x": 1}, {"x": 2}]
    assert out["truncated"] is True


def test_sql_unknown_connection_lists_the_known_names(sql_tool):
    with pytest.raises(ToolError) as info:
        sql_tool.run({"connection": "nope", "query": "SELECT 1"}, ctx())
    assert "nope" in str(info.value) and "main" in str(info.value) and "other" in str(info.value)


def test_sql_bad_sql_raises_tool_error_with_the_db_message(sql_tool):
    with pytest.raises(ToolError) as info:
        _sql(sql_tool, "SELEC nonsense")
    message = str(info.value)
    assert "syntax error" in message
    assert "Traceback" not in message and "sqlalche.me" not in message


def test_sql_failed_statement_leaves_no_partial_changes(sql_tool):
    _sql(sql_tool, "CREATE TABLE t (x INTEGER UNIQUE)")
    _sql(sql_tool, "INSERT INTO t (x) VALUES (1)")
    with pytest.raises(ToolError, match="UNIQUE"):
        _sql(sql_tool, "INSERT INTO t (x) VALUES (2), (1)")
    assert _sql(sql_tool, "SELECT x FROM t")["rows"] == [{"x": 1}]


def test_sql_runaway_query_is_interrupted_at_the_deadline(sql_tool):
    # the query never ends by itself: an answer at all (within pytest's time-out) means it was interrupted
    with pytest.raises(ToolError, match="timed out"):
        _sql(
            sql_tool,
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
            budget_s=0.3,
        )
    assert _sql(sql_tool, "SELECT 1 AS one")["rows"] == [{"one": 1}]  # the pooled connection still works


def test_sql_values_are_json_safe(sql_tool):
    out = _sql(sql_tool, "SELECT x'48690a' AS text_blob, x'ff00' AS binary_blob, 1.5 AS f")
    assert out["rows"] == [{"text_blob": "Hi\n", "binary_blob": "/wA=", "f": 1.5}]
    assert json_safe(dt.datetime(2024, 5, 1, 12, 30)) == "2024-05-01T12:30:00"
    assert json_safe(dt.date(2024, 5, 1)) == "2024-05-01"
    assert json_safe(Decimal("2.50")) == 2.5 and json_safe(Decimal("7")) == 7
    json.dumps(out)


# --- files in a temp data folder ------------------------------------------------------------


def test_file_write_then_read_round_trips_text(settings, data_dir):
    written = FileWriteTool(settings).run({"path": "notes/today.txt", "content": "héllo\n"}, ctx())
    assert written == {"path": "notes/today.txt", "bytes_written": len("héllo\n".encode())}
    out = FileReadTool(settings).run({"path": "notes/today.txt"}, ctx())
    assert out == {"path": "notes/today.txt", "content": "héllo\n", "size": 7}


def test_file_read_csv_returns_rows(settings, data_dir):
    (data_dir / "people.csv").write_text("name,age\nada,36\nbob,25\n")
    out = FileReadTool(settings).run({"path": "people.csv"}, ctx())
    assert out["rows"] == [{"name": "ada", "age": "36"}, {"name": "bob", "age": "25"}]


def test_file_read_json_returns_parsed_value(settings, data_dir):
    (data_dir / "conf.json").write_text('{"a": [1, 2]}')
    out = FileReadTool(settings).run({"path": "conf.json"}, ctx())
    assert out["json"] == {"a": [1, 2]}


def test_file_write_json_is_pretty_printed(settings, data_dir):
    FileWriteTool(settings).run({"path": "out.json", "json": {"b": 1, "a": ["x"]}}, ctx())
    text = (data_dir / "out.json").read_text()
    assert json.loads(text) == {"b": 1, "a": ["x"]} and "\n  " in text


def test_file_write_append_mode_appends(settings, data_dir):
    tool = FileWriteTool(settings)
    tool.run({"path": "log.txt", "content": "one\n"}, ctx())
    tool.run({"path": "log.txt", "content": "two\n", "mode": "append"}, ctx())
    assert (data_dir / "log.txt").read_text() == "one\ntwo\n"
    tool.run({"path": "log.txt", "content": "three\n"}, ctx())
    assert (data_dir / "log.txt").read_text() == "three\n"


def test_file_write_without_make_dirs_refuses_missing_folder(settings, data_dir):
    with pytest.raises(ToolError, match="does not exist"):
        FileWriteTool(settings).run({"path": "a/b/c.txt", "content": "x", "make_dirs": False}, ctx())


def test_file_read_refuses_parent_directory_escape(settings, data_dir):
    (data_dir.parent / "secret.txt").write_text("s3cret")
    for path in ("../secret.txt", "sub/../../secret.txt", "..\\secret.txt"):
        with pytest.raises(ToolError, match=r"\.\."):
            FileReadTool(settings).run({"path": path}, ctx())


def test_file_read_refuses_absolute_path(settings, data_dir):
    secret = data_dir.parent / "secret.txt"
    secret.write_text("s3cret")
    with pytest.raises(ToolError, match="absolute"):
        FileReadTool(settings).run({"path": str(secret)}, ctx())


def test_file_read_refuses_symlink_escaping_the_data_folder(settings, data_dir):
    secret = data_dir.parent / "secret.txt"
    secret.write_text("s3cret")
    (data_dir / "link.txt").symlink_to(secret)
    (data_dir / "linkdir").symlink_to(data_dir.parent, target_is_directory=True)
    for path in ("link.txt", "linkdir/secret.txt"):
        with pytest.raises(ToolError, match="outside the workspace.s data folder"):
            FileReadTool(settings).run({"path": path}, ctx())


def test_file_write_refuses_symlink_escaping_the_data_folder(settings, data_dir):
    (data_dir / "out").symlink_to(data_dir.parent, target_is_directory=True)
    with pytest.raises(ToolError, match="outside the workspace.s data folder"):
        FileWriteTool(settings).run({"path": "out/planted.txt", "content": "x"}, ctx())
    assert not (data_dir.parent / "planted.txt").exists()


def test_file_read_follows_symlinks_that_stay_inside(settings, data_dir):
    (data_dir / "real.txt").write_text("inside")
    (data_dir / "alias.txt").symlink_to(data_dir / "real.txt")
    assert FileReadTool(settings).run({"path": "alias.txt"}, ctx())["content"] == "inside"


def test_file_read_missing_file_and_size_limit_are_tool_errors(settings, data_dir):
    with pytest.raises(ToolError, match="no such file"):
        FileReadTool(settings).run({"path": "missing.txt"}, ctx())
    (data_dir / "big.txt").write_text("x" * 100)
    with pytest.raises(ToolError, match="max_bytes"):
        FileReadTool(settings).run({"path": "big.txt", "max_bytes": 10}, ctx())


# --- shell.run with real processes ----------------------------------------------------------


def test_shell_runs_allow_listed_echo_in_the_data_folder(settings, data_dir):
    out = ShellRunTool(settings).run({"command": ["echo", "hello", "$HOME; rm -rf /"]}, ctx())
    assert out == {"returncode": 0, "stdout": "hello $HOME; rm -rf /\n", "stderr": ""}


def test_shell_refuses_command_not_allow_listed(settings):
    with pytest.raises(ToolError, match="not allow-listed.*COACH_SHELL_ALLOW"):
        ShellRunTool(settings).run({"command": ["rm", "-rf", "x"]}, ctx())


def test_shell_refuses_other_binary_with_an_allowed_name(settings, tmp_path):
    fake = tmp_path / "bin" / "echo"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho pwned\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(ToolError, match="bare name"):
        ShellRunTool(settings).run({"command": [str(fake)]}, ctx())


def test_shell_timeout_kills_the_process(settings, data_dir):
    started = time.monotonic()
    with pytest.raises(ToolError, match="timed out after 0.5s"):
        ShellRunTool(settings).run({"command": ["sleep", "30"]}, ctx(0.5))
    assert time.monotonic() - started < 30  # killed, not waited for


@pytest.mark.skipif(not (shutil.which("cat") and shutil.which("pwd")), reason="needs cat and pwd")
def test_shell_passes_stdin_and_runs_in_the_requested_subfolder(settings, data_dir):
    tool = ShellRunTool(settings.with_overrides(shell_allow=("cat", "pwd")))
    assert tool.run({"command": ["cat"], "stdin": "piped"}, ctx())["stdout"] == "piped"
    (data_dir / "sub").mkdir()
    out = tool.run({"command": ["pwd"], "cwd": "sub"}, ctx())
    assert os.path.realpath(out["stdout"].strip()) == os.path.realpath(data_dir / "sub")
    with pytest.raises(ToolError, match=r"\.\."):
        tool.run({"command": ["pwd"], "cwd": ".."}, ctx())


# --- the registry ---------------------------------------------------------------------------


def test_build_registry_registers_all_builtins(settings):
    registry = build_registry(settings)
    assert BUILTINS <= set(registry.names())
    risks = {name: registry.get(name).risk for name in BUILTINS}
    assert risks == {
        "noop": "read",
        "echo": "read",
        "http.request": "external",
        "sql.query": "write",
        "file.read": "read",
        "file.write": "write",
        "shell.run": "destructive",
    }


def test_registry_schemas_check_params_with_schema_errors(settings):
    registry = build_registry(settings)
    http_schema = registry.get("http.request").params_schema
    assert schema_errors(http_schema, {"url": "https://example.com", "method": "GET"}) == {}
    assert "(params)" in schema_errors(http_schema, {"method": "GET"})
    assert "method" in schema_errors(http_schema, {"url": "https://x", "method": "FETCH"})
    assert "(params)" in schema_errors(http_schema, {"url": "https://x", "surprise": 1})
    write_schema = registry.get("file.write").params_schema
    assert schema_errors(write_schema, {"path": "a.txt", "content": "x"}) == {}
    assert schema_errors(write_schema, {"path": "a.txt", "content": "x", "json": {}})
    shell_schema = registry.get("shell.run").params_schema
    assert "command" in schema_errors(shell_schema, {"command": "rm -rf /"})


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    """A real importable module that entry points can name."""
    (tmp_path / "coach_test_plugin.py").write_text(
        "class PingTool:\n"
        "    name = 'test.ping'\n"
        "    description = 'pong'\n"
        "    params_schema = {'type': 'object'}\n"
        "    risk = 'read'\n"
        "    def __init__(self, settings):\n"
        "        self.settings = settings\n"
        "    def run(self, params, ctx):\n"
        "        return {'pong': True}\n"
        "class _Obj(PingTool):\n"
        "    name = 'test.object'\n"
        "    def __init__(self):\n"
        "        pass\n"
        "tool = _Obj()\n"
        "class _Hijack(_Obj):\n"
        "    name = 'file.read'\n"
        "hijack = _Hijack()\n"
        "def broken(settings):\n"
        "    raise RuntimeError('plugin exploded')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "coach_test_plugin"


@pytest.fixture(autouse=True)
def _real_entry_points_afterwards():
    yield
    tool_entry_points.cache_clear()


def _use_entry_points(monkeypatch, *specs: tuple[str, str]) -> None:
    eps = [importlib.metadata.EntryPoint(name=n, value=v, group=ENTRY_POINT_GROUP) for n, v in specs]

    def fake_entry_points(**kwargs):
        return eps if kwargs.get("group") == ENTRY_POINT_GROUP else []

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    tool_entry_points.cache_clear()  # read once per process: these now (the fixture below reads the real ones after)


def test_entry_points_add_tool_objects_and_factories(settings, monkeypatch, plugin_module):
    _use_entry_points(monkeypatch, ("ping", f"{plugin_module}:PingTool"), ("obj", f"{plugin_module}:tool"))
    registry = build_registry(settings)
    assert {"test.ping", "test.object"} <= set(registry.names())
    assert registry.get("test.ping").settings is settings
    assert registry.get("test.object").run({}, ctx()) == {"pong": True}


def test_failing_entry_points_are_logged_and_skipped(settings, monkeypatch, plugin_module, caplog):
    _use_entry_points(
        monkeypatch,
        ("missing", "coach_no_such_module:tool"),
        ("broken", f"{plugin_module}:broken"),
        ("hijack", f"{plugin_module}:hijack"),
        ("ping", f"{plugin_module}:PingTool"),
    )
    with caplog.at_level(logging.WARNING, logger="services.tools"):
        registry = build_registry(settings)
    assert "test.ping" in registry
    assert isinstance(registry.get("file.read"), FileReadTool)
    logged = caplog.text
    assert "missing" in logged and "plugin exploded" in logged and "taken by a built-in" in logged


# --- tenants: every tool knows whose it runs for ---------------------------------------------------------


def _all_tools(settings):
    return [
        FileReadTool(settings),
        FileWriteTool(settings),
        ShellRunTool(settings),
        SqlQueryTool(settings),
        HttpRequestTool(settings),
    ]


@pytest.mark.parametrize("workspace_id", ["", "  "])
def test_tenant_tools_refuse_to_run_without_a_workspace(settings, data_dir, server, workspace_id):
    params = {
        "file.read": {"path": "a.txt"},
        "file.write": {"path": "a.txt", "content": "x"},
        "shell.run": {"command": ["echo", "hi"]},
        "sql.query": {"connection": "main", "query": "SELECT 1"},
        "http.request": {"url": f"{server}/json"},
    }
    (data_dir / "a.txt").write_text("mine")
    for tool in _all_tools(settings):
        with pytest.raises(ToolError, match="needs a workspace"):
            tool.run(params[tool.name], ctx(workspace_id=workspace_id))
    # nothing was written to a shared folder either
    assert sorted(p.name for p in Path(settings.resolved_data_dir).iterdir()) == [WS]


def test_each_workspace_reads_and_writes_its_own_folder(settings, data_dir):
    write, read = FileWriteTool(settings), FileReadTool(settings)
    write.run({"path": "report.txt", "content": "from w1"}, ctx(workspace_id="w1"))
    write.run({"path": "report.txt", "content": "from w2"}, ctx(workspace_id="w2"))
    assert read.run({"path": "report.txt"}, ctx(workspace_id="w1"))["content"] == "from w1"
    assert read.run({"path": "report.txt"}, ctx(workspace_id="w2"))["content"] == "from w2"
    root = Path(settings.resolved_data_dir)
    assert (root / "w1" / "report.txt").read_text() == "from w1"
    assert (root / "w2" / "report.txt").read_text() == "from w2"
    write.run({"path": "only-w1.txt", "content": "secret"}, ctx(workspace_id="w1"))
    with pytest.raises(ToolError, match="no such file"):
        read.run({"path": "only-w1.txt"}, ctx(workspace_id="w2"))
    for path in ("../w1/only-w1.txt", "..\\w1\\only-w1.txt"):
        with pytest.raises(ToolError, match=r"\.\."):
            read.run({"path": path}, ctx(workspace_id="w2"))
    # a link planted in w2's folder towards w1's is refused too
    (root / "w2" / "peek").symlink_to(root / "w1", target_is_directory=True)
    with pytest.raises(ToolError, match="outside the workspace's data folder"):
        read.run({"path": "peek/only-w1.txt"}, ctx(workspace_id="w2"))


def test_a_workspace_id_cannot_name_a_folder_outside_the_data_folder(settings, data_dir):
    for bad in ("..", "../x", "a/b", ".hidden"):
        with pytest.raises(ToolError, match="workspace id"):
            FileWriteTool(settings).run({"path": "x.txt", "content": "x"}, ctx(workspace_id=bad))


@pytest.mark.skipif(not shutil.which("pwd"), reason="needs pwd")
def test_shell_runs_in_the_workspace_folder(settings, data_dir):
    tool = ShellRunTool(settings.with_overrides(shell_allow=("pwd",)))
    out = tool.run({"command": ["pwd"]}, ctx(workspace_id="w2"))
    assert os.path.realpath(out["stdout"].strip()) == os.path.realpath(Path(settings.resolved_data_dir) / "w2")
    with pytest.raises(ToolError, match=r"\.\."):
        tool.run({"command": ["pwd"], "cwd": "../w1"}, ctx(workspace_id="w2"))


def test_file_read_max_bytes_is_capped_at_the_servers_limit(settings, data_dir):
    tool = FileReadTool(settings.with_overrides(file_read_max_mb=0.001))  # 1048 bytes
    assert tool.params_schema["properties"]["max_bytes"]["maximum"] == 1048
    assert "max_bytes" in schema_errors(tool.params_schema, {"path": "big.txt", "max_bytes": 10**12})
    assert schema_errors(tool.params_schema, {"path": "big.txt", "max_bytes": 1000}) == {}
    (data_dir / "big.txt").write_text("x" * 2000)
    with pytest.raises(ToolError, match=r"more than max_bytes \(1048\)"):
        tool.run({"path": "big.txt", "max_bytes": 10**12}, ctx())  # past the schema too: still capped
    with pytest.raises(ToolError, match="max_bytes"):
        tool.run({"path": "big.txt"}, ctx())
    (data_dir / "small.txt").write_text("x" * 1000)
    assert tool.run({"path": "small.txt"}, ctx())["size"] == 1000
    assert FileReadTool(settings).params_schema["properties"]["max_bytes"]["maximum"] == 10 * 1024 * 1024


def test_file_write_past_the_workspace_quota_fails_and_writes_nothing(settings, data_dir):
    tool = FileWriteTool(settings.with_overrides(data_quota_mb=0.001))  # 1048 bytes per workspace
    tool.run({"path": "a.txt", "content": "x" * 600}, ctx())
    with pytest.raises(ToolError, match=r"quota of 1048 bytes \(COACH_DATA_QUOTA_MB\)") as info:
        tool.run({"path": "sub/b.txt", "content": "y" * 600}, ctx())
    assert "sub/b.txt" in str(info.value)
    assert not (data_dir / "sub" / "b.txt").exists()
    with pytest.raises(ToolError, match="quota"):
        tool.run({"path": "a.txt", "content": "x" * 600, "mode": "append"}, ctx())
    assert (data_dir / "a.txt").stat().st_size == 600
    tool.run({"path": "a.txt", "content": "z" * 1000}, ctx())  # an overwrite frees what it replaces
    assert (data_dir / "a.txt").read_text() == "z" * 1000
    tool.run({"path": "a.txt", "content": "w" * 1000}, ctx(workspace_id="w2"))  # each workspace has its own quota
    assert FileWriteTool(settings).settings.data_quota_bytes == 100 * 1024 * 1024  # the default: 100 MB


# --- SQL connections are granted per workspace -------------------------------------------------------------


class Slugs:
    """The workspace directory the server gives the tools, for two workspaces with slugs (no database here)."""

    def __init__(self, slugs: dict[str, str]):
        self.slugs = slugs

    def names(self, workspace_id):
        return {workspace_id, self.slugs[workspace_id]} if workspace_id in self.slugs else {workspace_id}

    def outbound(self, workspace_id):
        from core.outbound import OutboundLists

        return OutboundLists()


def test_sql_connection_is_only_for_the_workspaces_it_is_granted_to(settings, tmp_path):
    tool = SqlQueryTool(
        settings.with_overrides(
            sql_connections={
                "shared": {"url": "sqlite://", "workspaces": ["w1", "sales"]},
                "finance": {"url": f"sqlite:///{tmp_path / 'finance.db'}", "workspaces": ["w1"]},
            }
        ),
        Slugs({"w1": "hq", "w2": "sales", "w3": "ops"}),
    )
    try:
        assert tool.run({"connection": "finance", "query": "SELECT 1 AS one"}, ctx(workspace_id="w1"))["rows"] == [
            {"one": 1}
        ]
        assert tool.run({"connection": "shared", "query": "SELECT 2 AS two"}, ctx(workspace_id="w2"))["rows"] == [
            {"two": 2}
        ]
        with pytest.raises(ToolError) as ungranted:
            tool.run({"connection": "finance", "query": "SELECT 1"}, ctx(workspace_id="w2"))
        with pytest.raises(ToolError) as unknown:
            tool.run({"connection": "nowhere", "query": "SELECT 1"}, ctx(workspace_id="w2"))
        # the same words for "exists for another workspace" and "does not exist": nothing leaks
        assert str(ungranted.value).replace("finance", "X") == str(unknown.value).replace("nowhere", "X")
        assert "available: shared" in str(ungranted.value)
        with pytest.raises(ToolError, match="available: none") as none:
            tool.run({"connection": "shared", "query": "SELECT 1"}, ctx(workspace_id="w3"))
        assert "finance" not in str(none.value)
    finally:
        tool.close()


def test_sql_connections_in_the_old_plain_form_are_granted_to_nobody(settings, caplog):
    with caplog.at_level(logging.WARNING, logger="services.tools.sql"):
        tool = SqlQueryTool(settings.with_overrides(sql_connections={"legacy": "sqlite://", "bad": {"url": 5}}))
    assert "legacy" in caplog.text and "grants it to no workspace" in caplog.text and "'bad'" in caplog.text
    with pytest.raises(ToolError, match="no SQL connection 'legacy' is available to this workspace"):
        tool.run({"connection": "legacy", "query": "SELECT 1"}, ctx())


def test_settings_read_sql_grants_outbound_and_quota_from_the_environment():
    settings = Settings.from_env(
        {
            "COACH_SQL_CONNECTIONS": '{"wh": {"url": "sqlite://", "workspaces": ["default"]}}',
            "COACH_OUTBOUND_ALLOW": "127.0.0.1, 10.0.0.0/8 ,*.corp.example",
            "COACH_DATA_QUOTA_MB": "5",
            "COACH_FILE_READ_MAX_MB": "2",
        }
    )
    assert settings.sql_connections == {"wh": {"url": "sqlite://", "workspaces": ["default"]}}
    assert settings.outbound_allow == ("127.0.0.1", "10.0.0.0/8", "*.corp.example")
    assert settings.data_quota_bytes == 5 * 1024 * 1024 and settings.file_read_max_bytes == 2 * 1024 * 1024
    assert Settings().outbound_allow == () and Settings().data_quota_mb == 100


# --- outbound requests: checked after DNS, connected to the checked address, on every redirect -------------


def _port(server: str) -> int:
    return int(server.rsplit(":", 1)[1])


def test_http_refuses_loopback_and_private_hosts_by_default(settings, server):
    tool = HttpRequestTool(settings.with_overrides(outbound_allow=()))
    port = _port(server)
    for url, kind in [
        (f"{server}/json", "loopback"),
        (f"http://localhost:{port}/json", "loopback"),
        (f"http://[::1]:{port}/", "loopback"),
        (f"http://[::ffff:127.0.0.1]:{port}/", "loopback"),
        (f"http://[64:ff9b::7f00:1]:{port}/", "loopback"),
        (f"http://2130706433:{port}/", "loopback"),  # 127.0.0.1 as one number, resolved
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[fe80::1]/", "link-local"),
        ("http://100.64.0.1/", "not globally routable"),
    ]:
        with pytest.raises(ToolError, match="refused") as info:
            tool.run({"url": url}, ctx(5))
        message = str(info.value)
        assert kind in message and "COACH_OUTBOUND_ALLOW" in message, (url, message)
        host = (
            url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[0].strip("[]")
            if "[" not in url
            else url.split("[", 1)[1].split("]", 1)[0]
        )
        assert host in message, (url, message)


def test_the_servers_allow_list_opens_loopback_for_every_workspace(settings, server):
    tool = HttpRequestTool(settings)  # outbound_allow = 127.0.0.1
    assert tool.run({"url": f"{server}/json"}, ctx(workspace_id="w1"))["status"] == 200
    assert tool.run({"url": f"{server}/json"}, ctx(workspace_id="w2"))["status"] == 200
    with pytest.raises(ToolError, match="127.0.0.2.*loopback"):
        tool.run({"url": f"http://127.0.0.2:{_port(server)}/json"}, ctx(5))


def test_http_follows_redirects_itself(http_tool, server):
    out = http_tool.run({"url": f"{server}/redirect?to=/redirect%3Fto%3D/json"}, ctx(5))
    assert out["status"] == 200 and out["json"] == {"hello": "world", "n": 3}
    assert out["redirects"] == 2 and out["url"] == f"{server}/json"
    posted = http_tool.run({"method": "POST", "url": f"{server}/redirect?to=/host&status=307", "body": "keep"}, ctx(5))
    assert posted["json"]["method"] == "POST" and posted["json"]["body"] == "keep"
    seen = http_tool.run({"method": "POST", "url": f"{server}/redirect?to=/host&status=303", "body": "drop"}, ctx(5))
    assert seen["json"]["method"] == "GET" and seen["json"]["body"] == ""


def test_http_checks_every_redirect_hop(http_tool, server):
    port = _port(server)
    for target, why in [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        (f"http://127.0.0.2:{port}/json", "loopback"),
        (f"http://[::ffff:10.0.0.1]:{port}/", "private"),
    ]:
        with pytest.raises(ToolError, match=f"refused.*{why}") as info:
            http_tool.run({"url": f"{server}/redirect?to={target}"}, ctx(5))
        assert target.split("//")[1].split("/")[0].split("]")[0].strip("[").rsplit(":", 1)[0] in str(info.value)
    with pytest.raises(ToolError, match="redirected more than 5 times"):
        http_tool.run({"url": f"{server}/loop"}, ctx(5))
    with pytest.raises(ToolError, match="not an http"):
        http_tool.run({"url": f"{server}/redirect?to=file:///etc/passwd"}, ctx(5))


def test_http_connects_to_the_address_it_checked_and_keeps_the_host_name(settings, server):
    """The name is resolved once per hop, by the check; the connection goes to that address (the system's
    resolver does not even know the name) while the Host header still carries it."""
    port = _port(server)
    answers = {"app.internal.test": ["127.0.0.1", "10.9.9.9"]}
    asked: list[str] = []

    def resolver(host, _port):
        asked.append(host)
        import ipaddress

        return [ipaddress.ip_address(a) for a in answers[host]]

    tool = HttpRequestTool(settings, resolver=resolver)
    out = tool.run({"url": f"http://app.internal.test:{port}/host"}, ctx(5))
    assert out["json"]["host"] == f"app.internal.test:{port}"
    assert asked == ["app.internal.test"]
    # the connection goes to the first address that passed, not to whatever the name answers first
    answers["mixed.test"] = ["10.9.9.9", "127.0.0.1"]
    assert tool.run({"url": f"http://mixed.test:{port}/host"}, ctx(5))["json"]["host"] == f"mixed.test:{port}"
    answers["private.test"] = ["10.9.9.9"]
    with pytest.raises(ToolError, match=r"private.test \(10.9.9.9\) is a private address"):
        tool.run({"url": f"http://private.test:{port}/host"}, ctx(5))
    assert asked == ["app.internal.test", "mixed.test", "private.test"]  # once per hop: no second lookup


def test_http_obeys_the_workspaces_own_lists(settings, server):
    from core.outbound import OutboundLists

    class Lists(Slugs):
        def outbound(self, workspace_id):
            return {"w1": OutboundLists(deny=("127.0.0.0/8",)), "w2": OutboundLists(allow=("api.example.com",))}.get(
                workspace_id, OutboundLists()
            )

    tool = HttpRequestTool(settings, Lists({}))
    with pytest.raises(ToolError, match=r"127.0.0.1 is on this workspace's outbound deny list \(entry '127.0.0.0/8'\)"):
        tool.run({"url": f"{server}/json"}, ctx(5, workspace_id="w1"))
    with pytest.raises(ToolError, match="127.0.0.1 is not on this workspace's outbound allow list"):
        tool.run({"url": f"{server}/json"}, ctx(5, workspace_id="w2"))
    assert tool.run({"url": f"{server}/json"}, ctx(5, workspace_id="w3"))["status"] == 200
