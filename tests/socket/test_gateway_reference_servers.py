"""The MCP gateway (/mcp) with real clients and real servers: the agent is the MCP Inspector's CLI (npm
@modelcontextprotocol/inspector, `--cli`) or the official MCP Python SDK's client; the workspace's upstream servers are
the reference servers from the registries, started by Coach over stdio: mcp-server-time and mcp-server-git (PyPI,
requirements-mcp1.txt: they pin mcp 1.x, so they run from .venv-mcp1 as the 1.x-era upstreams Coach's 2.x client
meets with the initialize handshake) and server-everything (npm). The npm packages are tests/mcp_clients/package.json's,
installed by `make setup-dev`. Reviews are decided through the REST API as a lead would in the queue.

One Coach per module (SQLite): the reference servers start once each, at the first call that needs them."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.support.gateway_agents import (
    add_stdio_server,
    audit_calls,
    call,
    decide,
    make_agent,
    mcp,
    other_workspace_admin,
    pending_gateway,
    text,
)
from tests.support.live_server import REPO_ROOT, LiveServer
from tests.support.mcp1 import MCP1_PYTHON, mcp1_has

NODE_MODULES = REPO_ROOT / "tests" / "mcp_clients" / "node_modules"
# the launcher (`npx @modelcontextprotocol/inspector --cli …` runs it) and the CLI proper it starts with the same flags
INSPECTOR = NODE_MODULES / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js"
INSPECTOR_CLI = INSPECTOR.parent / "index.js"
EVERYTHING = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = shutil.which("node") or "node"
TIME = [str(MCP1_PYTHON), "-m", "mcp_server_time", "--local-timezone", "UTC"]
EVERYTHING_CMD = [NODE, str(EVERYTHING), "stdio"]
HOLD_S = 1.0

missing = [
    what
    for what, there in (
        ("mcp-server-time (.venv-mcp1)", mcp1_has("mcp_server_time")),
        ("mcp-server-git (.venv-mcp1)", mcp1_has("mcp_server_git")),
        ("node", shutil.which("node") is not None),
        ("git", shutil.which("git") is not None),
        ("@modelcontextprotocol/inspector (npm)", INSPECTOR.is_file()),
        ("@modelcontextprotocol/server-everything (npm)", EVERYTHING.is_file()),
    )
    if not there
]
pytestmark = pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)} (run `make setup-dev`)")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """A git repository of the test's own: one commit, a changed file and an untracked one."""
    path = tmp_path_factory.mktemp("repo")
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.test")
    git(path, "config", "user.name", "Dev")
    (path / "README.md").write_text("# Orders\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "Orders: the README")
    (path / "README.md").write_text("# Orders\n\nRefunds need a review.\n")
    (path / "notes.txt").write_text("to do\n")
    return path


@pytest.fixture(scope="module")
def server(repo, tmp_path_factory):
    git_cmd = [str(MCP1_PYTHON), "-m", "mcp_server_git", "--repository", str(repo)]
    rules = [
        ("times are fine", "allow", "time.get_current_time"),
        ("conversions need a look", "require_review", "time.convert_time"),
        ("echo is fine", "allow", "everything.echo"),
        ("no environment dumps", "deny", "everything.get-env"),
        ("weather is fine", "allow", "everything.get-structured-content"),
        ("messages are fine", "allow", "everything.get-annotated-message"),
        ("reading the repo is fine", "allow", "git.git_status"),
        ("the log is fine", "allow", "git.git_log"),
        ("branches need a look", "require_review", "git.git_create_branch"),
    ]
    allow = ",".join(" ".join(c) for c in (TIME, git_cmd, EVERYTHING_CMD))
    with LiveServer(
        tmp_path_factory.mktemp("gateway-reference") / "server",
        env={"COACH_MCP_STDIO_ALLOW": allow, "COACH_GATEWAY_HOLD_S": str(HOLD_S)},
    ) as live:
        add_stdio_server(live, "time", TIME)
        add_stdio_server(live, "git", git_cmd)
        add_stdio_server(live, "everything", EVERYTHING_CMD)
        for name, effect, tool in rules:
            made = live.http.post(
                live.url("/api/policies"),
                json={
                    "name": name,
                    "effect": effect,
                    "reason": f"{name} (tests)",
                    "match": {"tool": tool, "agent": "*"},
                },
                timeout=10,
            )
            assert made.status_code == 201, made.text
        made = live.http.post(
            live.url("/api/policies"),
            json={
                "name": "the environment check may look",
                "effect": "allow",
                "order": -1,
                "match": {"tool": "everything.get-env", "agent": "env-checker"},
            },
            timeout=10,
        )
        assert made.status_code == 201, made.text
        yield live


@pytest.fixture(scope="module")
def inspector_agent(server) -> dict:
    return make_agent(server, "inspector")


def inspector(
    target: list[str],
    method: str,
    tool: str | None = None,
    args: dict | None = None,
    headers: dict | None = None,
    launcher: bool = False,
) -> dict:
    """The MCP Inspector's CLI mode: its JSON answer (it exits 1 on a protocol error). Through the launcher, as a
    person runs it, when `launcher`; else the CLI proper that the launcher starts (a node process less, a second
    less per call)."""
    command = [NODE, str(INSPECTOR), "--cli"] if launcher else [NODE, str(INSPECTOR_CLI)]
    command += [*target, "--method", method]
    if tool:
        command += ["--tool-name", tool]
    for key, value in (args or {}).items():
        command += ["--tool-arg", f"{key}={value}"]
    for key, value in (headers or {}).items():
        command += ["--header", f"{key}: {value}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 0, f"the Inspector failed ({done.returncode}): {done.stderr or done.stdout}"
    return json.loads(done.stdout)


def through_coach(
    server: LiveServer,
    token: str,
    method: str,
    tool: str | None = None,
    args: dict | None = None,
    launcher: bool = False,
) -> dict:
    return inspector(
        [server.url("/mcp"), "--transport", "http"], method, tool, args, {"Authorization": f"Bearer {token}"}, launcher
    )


def texts(result: dict) -> str:
    return "\n".join(b["text"] for b in result["content"] if b.get("type") == "text")


def direct(command: list[str], *calls: tuple[str, dict]) -> list:
    """The reference server's own answers to these calls, over stdio with the SDK and no Coach between."""

    async def go():
        params = StdioServerParameters(command=command[0], args=command[1:])
        async with Client(params, cache=None) as client:
            return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return asyncio.run(go())


def direct_tools(command: list[str]) -> dict[str, dict]:
    """The reference server's own tools/list, by name."""

    async def go():
        params = StdioServerParameters(command=command[0], args=command[1:])
        async with Client(params, cache=None) as client:
            return {
                t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
                for t in (await client.list_tools()).tools
            }

    return asyncio.run(go())


# -- the MCP Inspector's CLI as the agent ----------------------------------------------------------------------------


def test_inspector_lists_the_reference_servers_tools_as_server_dot_tool_with_their_schemas(server, inspector_agent):
    listed = through_coach(server, inspector_agent["token"], "tools/list", launcher=True)  # `npx … --cli` as documented
    tools = {t["name"]: t for t in listed["tools"]}
    assert {
        "time.get_current_time",
        "time.convert_time",
        "git.git_status",
        "git.git_log",
        "everything.echo",
        "everything.get-structured-content",
    } <= set(tools)
    assert not [name for name in tools if name.split(".")[0] not in ("time", "git", "everything")]
    assert tools["time.get_current_time"]["inputSchema"]["required"] == ["timezone"]
    assert tools["git.git_status"]["inputSchema"]["properties"]["repo_path"]["type"] == "string"
    assert tools["everything.echo"]["annotations"]["readOnlyHint"] is True
    # each tool's title and output schema as the server gives them (a client checks a result against the schema)
    own = direct_tools(EVERYTHING_CMD)
    assert own["get-structured-content"].get("outputSchema")
    for name, spec in own.items():
        assert tools[f"everything.{name}"].get("title") == spec.get("title"), name
        assert tools[f"everything.{name}"].get("outputSchema") == spec.get("outputSchema"), name


def test_inspector_allowed_calls_get_the_reference_servers_real_results(server, inspector_agent):
    now = through_coach(
        server, inspector_agent["token"], "tools/call", "time.get_current_time", {"timezone": "Asia/Tokyo"}
    )
    assert now.get("isError") is not True, now
    answer = json.loads(texts(now))
    assert answer["timezone"] == "Asia/Tokyo" and answer["datetime"].endswith("+09:00")
    echoed = through_coach(server, inspector_agent["token"], "tools/call", "everything.echo", {"message": "hi Coach"})
    assert echoed.get("isError") is not True and texts(echoed) == "Echo: hi Coach"
    assert [(e["tool"], e["decision"]) for e in audit_calls(server, "inspector")][:2] == [
        ("everything.echo", "allow"),
        ("time.get_current_time", "allow"),
    ]


def test_inspector_denied_call_is_an_error_result_naming_the_rule(server, inspector_agent):
    denied = through_coach(server, inspector_agent["token"], "tools/call", "everything.get-env")
    assert denied["isError"] is True
    assert "denied" in texts(denied) and "no environment dumps" in texts(denied)


def test_inspector_held_call_approved_with_an_edit_gets_the_edited_calls_real_result(server, inspector_agent):
    asked = {"source_timezone": "Europe/Paris", "time": "14:30", "target_timezone": "America/New_York"}
    held = through_coach(server, inspector_agent["token"], "tools/call", "time.convert_time", asked)
    assert held["isError"] is True and "held for a person's review" in texts(held), held
    assert held["_meta"]["io.coach/gateway"]["decision"] == "pending_review"
    approval = pending_gateway(server, "time.convert_time", "inspector")
    assert approval["params"] == asked
    edited = {**asked, "target_timezone": "Asia/Tokyo"}
    assert (
        decide(
            server, approval["approval_id"], {"decision": "edit", "params": edited, "comment": "Tokyo is who asked"}
        ).status_code
        == 200
    )
    again = through_coach(server, inspector_agent["token"], "tools/call", "time.convert_time", asked)
    [own] = direct(TIME, ("convert_time", edited))  # mcp-server-time's own answer to the edited call
    assert again.get("isError") is not True
    note, *result = again["content"]  # the agent is told of the edit first, then the server's own result
    assert note["text"].startswith(
        "A reviewer (admin@live.test) edited the arguments before the call: "
        "target_timezone: 'America/New_York' → 'Asia/Tokyo'."
    )
    assert result == [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in own.content]
    assert json.loads(result[-1]["text"])["target"]["timezone"] == "Asia/Tokyo"
    latest = audit_calls(server, "inspector")[0]
    assert latest["decision"] == "edit" and latest["arguments"] == edited and latest["original_arguments"] == asked


# -- the official MCP Python SDK's client as the agent ---------------------------------------------------------------


def test_sdk_client_reads_the_tests_repository_through_mcp_server_git(server, repo):
    agent = make_agent(server, "sdk-reader")
    status = call(server, agent["token"], "git.git_status", {"repo_path": str(repo)})
    assert status.is_error is False, text(status)
    assert "modified:   README.md" in text(status) and "Untracked files" in text(status) and "notes.txt" in text(status)
    log = call(server, agent["token"], "git.git_log", {"repo_path": str(repo), "max_count": 5})
    assert log.is_error is False and "Orders: the README" in text(log)
    outside = call(server, agent["token"], "git.git_status", {"repo_path": "/"})  # the server's own refusal, passed on
    assert outside.is_error is True and "outside the allowed repository" in text(outside)


def test_sdk_client_rejected_call_reaches_the_agent_with_the_reviewers_feedback(server, repo):
    agent = make_agent(server, "sdk-brancher")
    asked = {"repo_path": str(repo), "branch_name": "fix"}
    held = call(server, agent["token"], "git.git_create_branch", asked)
    assert held.is_error is True and held.meta["io.coach/gateway"]["decision"] == "pending_review"
    approval = pending_gateway(server, "git.git_create_branch", "sdk-brancher")
    assert (
        decide(
            server, approval["approval_id"], {"decision": "reject", "comment": "name it after the ticket: COA-12"}
        ).status_code
        == 200
    )
    again = call(server, agent["token"], "git.git_create_branch", asked)
    assert again.is_error is True and "name it after the ticket: COA-12" in text(again)
    assert "fix" not in git(repo, "branch", "--list")  # it never ran


def test_sdk_client_gets_everythings_structured_content_and_annotations_as_the_server_gave_them(server):
    agent = make_agent(server, "sdk-structured")
    weather = call(server, agent["token"], "everything.get-structured-content", {"location": "Chicago"})
    message = call(server, agent["token"], "everything.get-annotated-message", {"messageType": "error"})
    own_weather, own_message = direct(
        EVERYTHING_CMD,
        ("get-structured-content", {"location": "Chicago"}),
        ("get-annotated-message", {"messageType": "error"}),
    )
    assert weather.is_error is False and weather.structured_content == own_weather.structured_content
    assert set(weather.structured_content) == {"temperature", "conditions", "humidity"}
    assert [b.model_dump() for b in message.content] == [b.model_dump() for b in own_message.content]
    assert message.content[0].annotations.priority == 1.0


# -- another workspace -----------------------------------------------------------------------------------------------


def test_another_workspaces_agent_sees_none_of_these_tools_and_cannot_call_them(server, repo):
    other_admin = other_workspace_admin(server, "elsewhere")
    outsider = make_agent(server, "outsider", token=other_admin)
    assert through_coach(server, outsider["token"], "tools/list")["tools"] == []
    tried = through_coach(server, outsider["token"], "tools/call", "time.get_current_time", {"timezone": "UTC"})
    assert tried["isError"] is True and "Unknown tool" in texts(tried)

    async def go():
        async with mcp(server, outsider["token"]) as session:
            return await session.list_tools(), await session.call_tool("git.git_status", {"repo_path": str(repo)})

    tools, result = asyncio.run(go())
    assert tools.tools == [] and result.is_error is True and "Unknown tool" in text(result)
    # a server of the same name in the other workspace: its own tools, under its own policies (none: the default)
    add_stdio_server(server, "time", TIME, token=other_admin)
    names = [t["name"] for t in through_coach(server, outsider["token"], "tools/list")["tools"]]
    assert names == ["time.convert_time", "time.get_current_time"]
    asked = {"source_timezone": "Europe/Paris", "time": "14:30", "target_timezone": "America/New_York"}
    converted = through_coach(server, outsider["token"], "tools/call", "time.convert_time", asked)
    assert converted.get("isError") is not True, converted  # not held by the first workspace's rule
    assert json.loads(texts(converted))["target"]["timezone"] == "America/New_York"
    assert audit_calls(server, "outsider") == []  # the first workspace's audit holds none of it
    queue = server.http.get(server.url("/api/approvals?status=pending&per_page=100"), timeout=10).json()["items"]
    assert not [a for a in queue if a.get("agent") == "outsider"]


def test_the_servers_coach_starts_get_none_of_coachs_environment(server):
    """Coach's own settings (the database URL, the admin's password …) stay out of the stdio servers it starts: a
    server sees the few variables the SDK passes by default (PATH, HOME …)."""
    checker = make_agent(server, "env-checker")
    shown = call(server, checker["token"], "everything.get-env", {})
    assert shown.is_error is False, text(shown)
    env = json.loads(text(shown))
    assert "PATH" in env and not [k for k in env if k.startswith("COACH_")]
    assert server.admin_password not in text(shown)
    denied = call(server, make_agent(server, "env-curious")["token"], "everything.get-env", {})
    assert denied.is_error is True and "no environment dumps" in text(denied)  # the exception is env-checker's only
