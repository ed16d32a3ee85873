"""The real server in its default async mode stays responsive while users' runaway code is evaluated and while
costly requests are served (issue #11, item 1): `/healthz` answers within 50 ms meanwhile."""
from __future__ import annotations

import statistics
import subprocess
import sys
import time

import requests

BOMBS = [
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{{ 10 ** 4000000 }}",
    "{{ lipsum(20000) }}",
    "{% set l = range(100000)|list %}{% for a in l %}{% for b in l %}{{ b }}{% endfor %}{% endfor %}",
]
LIMIT_MS = 50


class Healthz:
    """Probes /healthz on a kept-alive connection, as a monitor does, for as long as the block runs. The probe
    is a process of its own, so that what the test itself does (sending 8 MB) cannot delay it."""

    PROBE = """
import http.client, sys, time
conn = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]), timeout=10)
while True:
    at, started = time.monotonic(), time.perf_counter()
    conn.request("GET", "/healthz")
    response = conn.getresponse()
    response.read()
    print(at, (time.perf_counter() - started) * 1000, flush=True)
    time.sleep(0.003)
"""

    def __init__(self, server):
        self.server = server
        self.latencies: list[float] = []
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> "Healthz":
        self._process = subprocess.Popen([sys.executable, "-c", self.PROBE, self.server.host, str(self.server.port)],
                                         stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)  # the connection is warm; what it measured until now is not counted
        self._started = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        time.sleep(0.1)
        self._process.terminate()
        out, _ = self._process.communicate(timeout=10)
        pairs = [line.split() for line in out.splitlines() if len(line.split()) == 2]
        # CLOCK_MONOTONIC is the machine's: the warm-up's samples are those taken before the block began
        self.latencies = [float(ms) for at, ms in pairs if float(at) >= self._started]

    def assert_responsive(self) -> None:
        """Answers within 50 ms (the 95th percentile: a 2-core machine running other work hiccups now and then)
        and never as late as 150 ms. Before the budgets each of these held the server 0.25 to 6 s."""
        lat = sorted(self.latencies)
        assert len(lat) > 10, f"only {len(lat)} probes answered"
        p95 = lat[int(len(lat) * 0.95) - 1]
        summary = f"p95 {p95:.1f} ms, worst {lat[-1]:.1f} ms, median {statistics.median(lat):.1f} ms, {len(lat)} probes"
        assert p95 < LIMIT_MS and lat[-1] < 3 * LIMIT_MS, summary


def _settle(server, execution_id: str, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        ex = server.http.get(server.url(f"/api/executions/{execution_id}")).json()
        if ex["status"] not in ("pending", "running") or time.monotonic() > deadline:
            return ex
        time.sleep(0.03)


def _start(server, workflow_id: str, variables: dict | None = None) -> str:
    started = server.http.post(server.url("/api/executions/"),
                               json={"workflow_id": workflow_id, "variables": variables or {}, "mode": "normal"})
    assert started.status_code == 201, started.text
    return started.json()["execution_id"]


def _workflow(server, steps: list, **extra) -> str:
    made = server.http.post(server.url("/api/workflows"), json={"name": "w", "steps": steps, **extra})
    assert made.status_code == 201, made.text
    return made.json()["id"]


def test_healthz_answers_within_50_ms_while_bombs_run(live_server):
    kinds = [[{"id": "bomb", "tool": "echo", "params": {"m": bomb}}] for bomb in BOMBS]
    kinds.append([{"id": "bomb", "type": "validation", "target": "vars.code",
                   "schema": {"type": "string", "pattern": "^(a|a)*$"}}])
    wf_ids = [_workflow(live_server, steps, variables={"code": {"type": "string"}}) for steps in kinds]
    with Healthz(live_server) as healthz:
        finished = [_settle(live_server, _start(live_server, wf_id, {"code": "a" * 40 + "b"}))
                    for wf_id in wf_ids * 2]  # one bomb at a time, each twice
    assert all(ex["status"] == "failed" for ex in finished), [ex["status"] for ex in finished]
    errors = [ex["steps"][0]["error"] for ex in finished[:len(wf_ids)]]
    for error, words in zip(errors, ("time budget", "a power", "lipsum", "budget", "does not match")):
        assert words in error, errors
    healthz.assert_responsive()


def test_many_costly_conditions_in_a_row_do_not_hold_the_server(live_server):
    """Each condition is within its own budget; a hundred and fifty in a row held the server ~450 ms in one
    transaction. The runner takes steps for at most a slice, then goes on in a new transaction."""
    costly = "(range(60000) | list | sum) < 0"  # ~3 ms of CPU, within its budget, and false: all skipped
    steps = [{"id": f"s{i}", "tool": "echo", "params": {}, "when": costly} for i in range(150)]
    steps.append({"id": "last", "tool": "echo", "params": {"done": True}, "depends_on": []})
    wf_id = _workflow(live_server, steps)
    with Healthz(live_server) as healthz:
        finished = [_settle(live_server, _start(live_server, wf_id)) for _ in range(3)]
    for ex in finished:
        assert ex["status"] == "completed", ex["status"]
        statuses = {s["step_id"]: s["status"] for s in ex["steps"]}
        assert statuses.pop("last") == "succeeded" and set(statuses.values()) == {"skipped"}
    healthz.assert_responsive()


def test_saving_a_definition_with_large_templates_does_not_hold_the_server(live_server):
    """Parsing templates is the costly part of a save (~5 ms per KB when dense): it runs off the event loop,
    and a definition's templates are bounded together (64 KiB)."""
    dense = "{{ vars.a ~ vars.b.c ~ (vars.n + 1) }} t " * 380  # ~15 KB of dense template per step
    with Healthz(live_server) as healthz:
        for _ in range(3):
            _workflow(live_server, [{"id": f"s{i}", "tool": "echo", "params": {"m": dense}} for i in range(4)])
        too_large = live_server.http.post(live_server.url("/api/workflows"), json={"name": "too large", "steps": [
            {"id": f"s{i}", "tool": "echo", "params": {"m": dense}} for i in range(8)]})
    assert too_large.status_code == 422
    assert any("65,536" in m for m in sum(too_large.json()["error"]["details"].values(), []))
    healthz.assert_responsive()


def test_logging_in_does_not_hold_the_server(live_server):
    """A password hash takes ~50 ms of CPU: it is checked off the event loop."""
    with Healthz(live_server) as healthz, requests.Session() as s:
        s.trust_env = False
        for _ in range(4):
            login = s.post(live_server.url("/api/auth/login"),
                           json={"email": live_server.admin_email, "password": live_server.admin_password})
            assert login.status_code == 200, login.text
    healthz.assert_responsive()


def test_large_bodies_are_refused_without_holding_the_server(live_server):
    """8 MB of small JSON values took ~6 s to parse and check on the event loop, on the unauthenticated login
    route too: a body holds at most 200,000 values (estimated before parsing), and YAML at most 256 KiB."""
    many = ("[" + ",".join(["1"] * 4_000_000) + "]").encode()
    yaml_body = ("name: big\nsteps:\n" + "".join(f"  - {{id: s{i}, tool: echo}}\n" for i in range(12_000))).encode()
    with Healthz(live_server) as healthz, requests.Session() as anonymous:
        anonymous.trust_env = False
        login = anonymous.post(live_server.url("/api/auth/login"), data=many,
                               headers={"Content-Type": "application/json"}, timeout=30)
        saved = live_server.http.post(live_server.url("/api/workflows"), data=many,
                                      headers={"Content-Type": "application/json"}, timeout=30)
        as_yaml = live_server.http.post(live_server.url("/api/workflows"), data=yaml_body,
                                        headers={"Content-Type": "application/yaml"}, timeout=30)
    assert login.status_code == 413 and "200,000 values" in login.text, login.text[:300]
    assert saved.status_code == 413, saved.text[:300]
    assert as_yaml.status_code == 413 and "YAML body is at most" in as_yaml.text, as_yaml.text[:300]
    healthz.assert_responsive()
