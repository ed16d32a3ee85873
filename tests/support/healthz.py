"""A /healthz probe beside a live server, as a monitor would run it: how long the server keeps a request waiting
while other work runs.

The suite asserts only that the probes went on being answered (a timing would fail on a loaded machine);
`bench/responsiveness.py` runs the same scenarios and compares the latencies with their target. Set
COACH_HEALTHZ_REPORT to a file and each probe block appends a JSON line with its latencies there.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

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


class Healthz:
    """Probes /healthz on a kept-alive connection for as long as the block runs. The probe is a process of its own,
    so that what the test itself does (sending 8 MB) cannot delay it."""

    def __init__(self, server, name: str):
        self.server, self.name = server, name
        self.latencies: list[float] = []
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> Healthz:
        self._process = subprocess.Popen(
            [sys.executable, "-c", PROBE, self.server.host, str(self.server.port)], stdout=subprocess.PIPE, text=True
        )
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
        report = os.environ.get("COACH_HEALTHZ_REPORT")
        if report and exc[0] is None:
            with open(report, "a", encoding="utf-8") as out_file:
                out_file.write(json.dumps({"scenario": self.name, "latencies_ms": self.latencies}) + "\n")

    def summary(self) -> str:
        lat = sorted(self.latencies) or [float("nan")]
        p95 = lat[max(int(len(lat) * 0.95) - 1, 0)]
        return f"p95 {p95:.1f} ms, worst {lat[-1]:.1f} ms, median {statistics.median(lat):.1f} ms, {len(lat)} probes"

    def assert_answered(self) -> None:
        """The server went on answering while the work ran: a server held by it answers at most the probe it was
        already answering (before the budgets, each of these scenarios held it 0.25 to 6 s in one piece). How many
        more it answers depends on how loaded the machine is, and how fast on that too: bench/responsiveness.py's
        business."""
        assert len(self.latencies) >= 2, f"only {len(self.latencies)} probes answered: {self.summary()}"
