"""A scripted OpenAI-compatible chat completions server on loopback: real HTTP, for the real `openai` client.

    with ScriptedLLM() as llm:
        llm.script("invoices", [                                  # conversations whose goal says "invoices"
            {"tool_calls": [{"name": "file_read", "arguments": {"path": "a.csv"}}]},   # turn 1
            {"content": "Total: 42. STAGE_COMPLETE"},                                    # turn 2
        ])
        settings = Settings(llm_base_url=llm.base_url, llm_model="scripted", ...)
        ...
        llm.requests          # every request received: {"turn", "body", "headers", "path", "size" (bytes)}
        llm.hits              # GET /tool/<name>?delay=s, a target for http.request calls: hits per path

What it answers is chosen by the conversation, not by the order requests arrive: turn N of a conversation is the
request that carries N - 1 assistant messages, so a request for a turn already answered is a repeat (`repeats()`).
A turn is a reply, or a list of replies given one per request for that turn (the last one repeats): e.g. a 429 then
the answer. A reply is {"content", "tool_calls": [{"name", "arguments" (object or raw string), "id"}], "reasoning"},
or {"status": 429, "headers": {"Retry-After": "1"}, "body": {...}}, or a callable(request body) -> a reply; any
reply may add "delay" (seconds before answering). A turn past the script's end answers "STAGE_COMPLETE".
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedLLM:
    def __init__(self, default: list | None = None):
        self.scripts: list[tuple[str, list]] = []
        self.default = default or []
        self.requests: list[dict[str, Any]] = []
        self.hits: dict[str, int] = {}  # GET /tool/<name>: how many times each was called
        self._served: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    # -- scripts -------------------------------------------------------------------------------------------------
    def script(self, goal_contains: str, turns: list) -> None:
        """Conversations whose goal (first user message) contains `goal_contains` follow `turns`."""
        with self._lock:
            self.scripts.insert(0, (goal_contains, turns))

    def _turns_for(self, goal: str) -> tuple[str, list]:
        for key, turns in self.scripts:
            if key in goal:
                return key, turns
        return "", self.default

    # -- what was received ---------------------------------------------------------------------------------------
    def for_goal(self, goal_contains: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if goal_contains in r["goal"]]

    def repeats(self, goal_contains: str = "") -> list[int]:
        """Turns requested more than once and answered each time (a 429 or a 5xx that was retried is not one)."""
        seen: dict[int, int] = {}
        for r in self.for_goal(goal_contains):
            if r["status"] == 200:
                seen[r["turn"]] = seen.get(r["turn"], 0) + 1
        return sorted(t for t, n in seen.items() if n > 1)

    # -- serving -------------------------------------------------------------------------------------------------
    def reply_for(
        self, body: dict[str, Any], headers: dict[str, str], path: str, size: int = 0
    ) -> tuple[int, dict, dict]:
        messages = body.get("messages") or []
        goal = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
        turn = sum(1 for m in messages if m.get("role") == "assistant") + 1
        key, turns = self._turns_for(goal)
        with self._lock:
            served = self._served.get((key, turn), 0)
            self._served[(key, turn)] = served + 1
        planned: Any = turns[turn - 1] if turn <= len(turns) else {"content": "STAGE_COMPLETE"}
        if isinstance(planned, list):
            planned = planned[min(served, len(planned) - 1)]
        if callable(planned):
            planned = planned(body)
        if planned.get("delay"):
            time.sleep(planned["delay"])
        status = int(planned.get("status", 200))
        record = {
            "turn": turn,
            "goal": goal,
            "body": body,
            "headers": headers,
            "path": path,
            "status": status,
            "at": time.monotonic(),
            "size": size,
        }  # size: the body's bytes as received
        with self._lock:
            self.requests.append(record)
        if status != 200:
            return (
                status,
                planned.get("headers") or {},
                planned.get("body") or {"error": {"message": f"scripted {status}", "type": "scripted", "code": status}},
            )
        return 200, {}, completion(planned, turn, body.get("model") or "scripted")

    def start(self) -> ScriptedLLM:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms wait for an ACK

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                """/tool/<name>?delay=<s>: a target for the agent's http.request calls, counting its hits."""
                from urllib.parse import parse_qs, urlsplit

                parts = urlsplit(self.path)
                if not parts.path.startswith("/tool/"):
                    self._send(404, {}, {"error": {"message": f"no route {self.path}"}})
                    return
                with owner._lock:
                    owner.hits[parts.path] = owner.hits.get(parts.path, 0) + 1
                    hits = owner.hits[parts.path]
                delay = float((parse_qs(parts.query).get("delay") or ["0"])[0])
                if delay:
                    time.sleep(delay)
                self._send(200, {}, {"path": parts.path, "hits": hits})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {}, {"error": {"message": f"no route {self.path}"}})
                    return
                status, headers, answer = owner.reply_for(
                    body, {k.lower(): v for k, v in self.headers.items()}, self.path, len(raw)
                )
                self._send(status, headers, answer)

            def _send(self, status: int, headers: dict, answer: dict) -> None:
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, str(v))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="scripted-llm", daemon=True)
        self.thread.start()
        return self

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def completion(planned: dict[str, Any], turn: int, model: str) -> dict[str, Any]:
    """A chat completion answer in the OpenAI shape."""
    calls = []
    for i, call in enumerate(planned.get("tool_calls") or (), start=1):
        arguments = call.get("arguments", {})
        calls.append(
            {
                "id": call.get("id") or f"call_{turn}_{i}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    message: dict[str, Any] = {"role": "assistant", "content": planned.get("content")}
    if calls:
        message["tool_calls"] = calls
    if planned.get("reasoning"):
        message["reasoning_content"] = planned["reasoning"]
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


Reply = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]
