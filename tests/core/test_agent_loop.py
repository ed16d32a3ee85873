"""The agent loop (core/agent) with a fake provider and an in-memory host: no server, no database."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from core.agent import conversation as C
from core.agent.conversation import ToolCall
from core.agent.loop import AgentLoop, Result, Ruling, answered, final_output, markers, next_move, opening
from core.agent.provider import ProviderError, Reply, Request
from core.agent.spec import AgentSpec, api_names, resolve_tools
from core.errors import ValidationFailed
from core.tools import ToolRegistry
from core.workflow import parse_definition


@dataclass
class FakeTool:
    name: str
    params_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    description: str = ""


READ = FakeTool(
    "file.read",
    {
        "type": "object",
        "required": ["path"],
        "additionalProperties": False,
        "properties": {"path": {"type": "string"}, "max_bytes": {"type": "integer"}},
    },
    "Read a file",
)
ECHO = FakeTool("echo", description="Echo its params")
TOOLS = {"echo": ECHO, "file.read": READ}


class FakeProvider:
    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list[Request] = []

    def complete(self, request: Request) -> Reply:
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else Reply("STAGE_COMPLETE")
        if isinstance(reply, Exception):
            raise reply
        return reply


class MemoryHost:
    def __init__(self, judge=None, results=None):
        self.saved: list[C.Message] = []
        self.flushes = 0
        self.alive = True
        self.runs: list[tuple[str, Any]] = []
        self.reviews: list[C.Message] = []
        self.asked: list[str] = []
        self.approvals: list[str] = []
        self._judge = judge or (lambda m: Ruling("allow", m.arguments))
        self.results = results or {}

    def save(self, messages):
        self.saved.extend(messages)

    def flush(self):
        self.flushes += 1
        return self.alive

    def judge(self, m):
        return self._judge(m)

    def open_review(self, m, ruling):
        self.reviews.append(m)

    def inline(self, tool):
        return tool == "echo"

    def run_tool(self, m):
        self.runs.append((m.tool, m.params))
        found = self.results.get(m.tool)
        return found(m) if found else Result(True, m.params)

    def ask(self, m, question):
        self.asked.append(question)

    def request_approval(self, m, text):
        self.approvals.append(text)


def call(name: str, arguments: Any = None, id: str | None = None) -> ToolCall:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return ToolCall(id or f"c-{name}-{raw}", name, raw)


def run(spec: AgentSpec, *replies, host: MemoryHost | None = None, messages=None):
    provider = FakeProvider(*replies)
    host = host or MemoryHost()
    messages = messages if messages is not None else opening(spec, spec.goal)
    loop = AgentLoop(spec, provider, host, TOOLS, model="m", key="ex/step")
    stop = loop.run(messages)
    return stop, provider, host, messages


SPEC = AgentSpec(goal="Count the invoices", tools=("echo", "file.read"))


def tool_messages(messages):
    return [m for m in messages if m.role == C.TOOL]


def test_a_chain_of_turns_ends_with_the_final_answer_as_output():
    stop, provider, host, messages = run(
        SPEC,
        Reply("reading", (call("file_read", {"path": "a.csv"}),)),
        Reply(None, (call("echo", {"n": 2}),)),
        Reply("There are 2 invoices."),
    )
    assert stop.kind == "done" and stop.output == {"answer": "There are 2 invoices."}
    assert host.runs == [("file.read", {"path": "a.csv"}), ("echo", {"n": 2})]
    assert [len(r.messages) for r in provider.requests] == [2, 4, 6]
    # every request is made after what came before it was flushed
    assert host.flushes >= 3
    assert provider.requests[1].messages[-1] == {
        "role": "tool",
        "tool_call_id": 'c-file_read-{"path": "a.csv"}',
        "content": '{"path":"a.csv"}',
    }


def test_the_tools_are_offered_under_api_safe_names_and_either_name_is_understood():
    stop, provider, host, _ = run(SPEC, Reply(None, (call("file.read", {"path": "x"}),)), Reply("ok"))
    names = [t["function"]["name"] for t in provider.requests[0].tools]
    assert names == ["echo", "file_read"]
    assert host.runs == [("file.read", {"path": "x"})]
    assert api_names(["a.b", "a_b"]) == {"a_b": "a.b", "a_b_2": "a_b"}


def test_parallel_calls_each_get_exactly_one_answer_before_the_next_request():
    stop, provider, host, messages = run(
        SPEC,
        Reply(
            None, (call("echo", {"i": 1}, "x1"), call("echo", {"i": 2}, "x2"), call("file_read", {"path": "p"}, "x3"))
        ),
        Reply("done"),
    )
    second = provider.requests[1].messages
    assert [m["tool_call_id"] for m in second if m["role"] == "tool"] == ["x1", "x2", "x3"]
    assert stop.kind == "done"


def test_invalid_json_arguments_go_back_naming_the_parameters_and_a_retry_runs():
    stop, provider, host, messages = run(
        SPEC,
        Reply(None, (call("file_read", '{"path": '),)),
        Reply(None, (call("file_read", {"path": "a"}),)),
        Reply("ok"),
    )
    error = tool_messages(messages)[0]
    assert error.error and error.decision == "invalid"
    assert "not valid JSON" in error.content and "path (string, required), max_bytes (integer)" in error.content
    assert host.runs == [("file.read", {"path": "a"})]
    assert stop.kind == "done"


def test_arguments_that_fail_the_schema_go_back_saying_what_is_wrong():
    stop, _, host, messages = run(SPEC, Reply(None, (call("file_read", {"path": 3, "extra": 1}),)), Reply("ok"))
    error = tool_messages(messages)[0].content
    assert "path: 3 is not of type 'string'" in error and "'extra' was unexpected" in error
    assert host.runs == []


def test_an_unknown_tool_goes_back_listing_the_tools_of_the_step():
    _, _, _, messages = run(SPEC, Reply(None, (call("shell_run", {}),)), Reply("ok"))
    assert "no tool 'shell_run'" in tool_messages(messages)[0].content
    assert "echo, file_read" in tool_messages(messages)[0].content


def test_the_same_call_three_times_ends_the_loop_with_an_error():
    same = Reply(None, (call("echo", {"a": 1}),))
    stop, provider, host, _ = run(SPEC, same, same, same, Reply("never"))
    assert stop.kind == "failed" and "same call 3 times" in stop.error and "echo" in stop.error
    assert len(host.runs) == 2 and len(provider.requests) == 3


def test_running_out_of_tool_iterations_ends_the_loop_naming_the_limit():
    spec = AgentSpec(goal="g", tools=("echo",), max_tool_iterations=2)
    stop, provider, host, _ = run(spec, *[Reply(None, (call("echo", {"i": i}),)) for i in range(5)])
    assert stop.kind == "failed" and "max_tool_iterations (2)" in stop.error
    assert len(host.runs) == 2 and len(provider.requests) == 3


def test_the_oldest_tool_results_are_shortened_first_with_a_marker():
    spec = AgentSpec(goal="g", tools=("echo",), context_budget_kb=4.5)  # the tool definitions count too
    big = {"text": "x" * 1500}
    host = MemoryHost(results={"echo": lambda m: Result(True, {**big, "i": m.params["i"]})})
    stop, provider, host, messages = run(
        spec, *[Reply(None, (call("echo", {"i": i}),)) for i in range(4)], Reply("done"), host=host
    )
    last = provider.requests[-1]
    results = [m["content"] for m in last.messages if m["role"] == "tool"]
    assert "trimmed by Coach to fit the context budget" in results[0]
    assert "trimmed" not in results[-1] and results[-1].endswith('"i":3}')
    assert _posted(last) <= 4.5 * 1024
    assert tool_messages(messages)[0].trimmed and not tool_messages(messages)[-1].trimmed


def test_output_schema_takes_the_json_answer_and_asks_again_when_it_does_not_fit():
    spec = AgentSpec(
        goal="g", output_schema={"type": "object", "required": ["total"], "properties": {"total": {"type": "number"}}}
    )
    stop, provider, _, messages = run(spec, Reply('{"sum": 1}'), Reply('```json\n{"total": 42}\n``` STAGE_COMPLETE'))
    assert stop.kind == "done" and stop.output == {"total": 42}
    assert messages[-2].kind == C.REPAIR and "'total' is a required property" in messages[-2].content
    stop, _, _, _ = run(spec, Reply("no"), Reply("still no"), Reply("nope"))
    assert stop.kind == "failed" and "does not fit output_schema" in stop.error


def test_confirm_data_waits_for_a_person_whose_answer_is_the_next_message():
    stop, provider, host, messages = run(SPEC, Reply("CONFIRM_DATA: Is the total 42?"))
    assert stop.kind == "waiting" and host.asked == ["Is the total 42?"]
    assert messages[-1].asked
    # asked again (a restart), the loop waits, it does not ask twice
    stop, provider2, host2, _ = run(SPEC, host=MemoryHost(), messages=messages)
    assert stop.kind == "waiting" and host2.asked == [] and provider2.requests == []
    answered(messages, "Yes, 42.")
    stop, provider3, _, _ = run(SPEC, Reply("Confirmed: 42"), messages=messages)
    assert stop.output == {"answer": "Confirmed: 42"}
    assert provider3.requests[0].messages[-1] == {"role": "user", "content": "Yes, 42."}


def test_request_approval_waits_and_an_approval_lets_it_go_on():
    stop, _, host, messages = run(SPEC, Reply("REQUEST_APPROVAL: pay 42 EUR"))
    assert stop.kind == "waiting" and host.approvals == ["pay 42 EUR"]
    answered(messages, "Approved by lead@x.", C.APPROVED)
    stop, _, _, _ = run(SPEC, Reply("Paid. STAGE_COMPLETE"), messages=messages)
    assert stop.output == {"answer": "Paid."}


def test_a_denied_call_returns_the_reason_and_never_runs():
    host = MemoryHost(judge=lambda m: Ruling("deny", m.arguments, reason='denied by policy "no reads"'))
    stop, _, host, messages = run(SPEC, Reply(None, (call("file_read", {"path": "a"}),)), Reply("ok"), host=host)
    denied = tool_messages(messages)[0]
    assert host.runs == [] and denied.decision == "deny" and 'denied by policy "no reads"' in denied.content
    assert "do not repeat" in denied.content


def test_a_reviewed_call_stops_the_loop_until_a_decision_and_then_runs_once():
    host = MemoryHost(judge=lambda m: Ruling("review", m.arguments, purpose="coaching"))
    stop, provider, host, messages = run(SPEC, Reply("I read it", (call("file_read", {"path": "a"}),)), host=host)
    assert stop.kind == "waiting" and host.reviews and host.runs == []
    pending = tool_messages(messages)[0]
    assert pending.status == C.REVIEW
    pending.status, pending.params, pending.decision = C.READY, {"path": "b"}, "correct"  # services.decisions.coaching
    stop, provider2, host2, _ = run(SPEC, Reply("done"), messages=messages)
    assert host2.runs == [("file.read", {"path": "b"})] and stop.kind == "done"
    assert len(provider2.requests) == 1  # the stored turn is not asked for again


def test_a_stored_conversation_goes_on_without_asking_a_stored_turn_or_running_a_stored_result_again():
    _, _, host, messages = run(SPEC, Reply(None, (call("echo", {"i": 1}),)), ProviderError("down"))
    assert host.runs == [("echo", {"i": 1})]
    stop, provider, host2, _ = run(SPEC, Reply("finished"), messages=messages)
    assert host2.runs == [] and len(provider.requests) == 1 and stop.output == {"answer": "finished"}


def test_stage_complete_with_calls_runs_them_then_finishes():
    stop, provider, host, _ = run(SPEC, Reply("Writing. STAGE_COMPLETE", (call("echo", {"w": 1}),)))
    assert host.runs == [("echo", {"w": 1})] and stop.output == {"answer": "Writing."}
    assert len(provider.requests) == 1


def test_a_provider_error_fails_the_loop_with_its_message():
    stop, _, _, _ = run(SPEC, ProviderError("the LLM server at http://x could not be reached"))
    assert stop.kind == "failed" and "could not be reached" in stop.error


def test_a_loop_whose_step_is_no_longer_its_own_stops_at_the_next_flush():
    host = MemoryHost()
    host.alive = False
    stop, provider, _, _ = run(SPEC, Reply("x"), host=host)
    assert stop.kind == "gone" and provider.requests == []


def test_markers_and_final_outputs():
    assert markers("Need this. CONFIRM_DATA: total 42?") == ("CONFIRM_DATA", "total 42?")
    assert markers("REQUEST_APPROVAL") == ("REQUEST_APPROVAL", "")
    assert markers("done STAGE_COMPLETE") == ("STAGE_COMPLETE", "done")
    assert markers("plain") == (None, "plain")
    assert final_output("x", None) == ({"answer": "x"}, [])
    assert final_output('{"a": 1}', {"type": "object"}) == ({"a": 1}, [])


def test_next_move_of_an_empty_conversation_asks_the_llm():
    assert next_move(opening(SPEC, "g"), SPEC).kind == "ask"


def test_agent_specs_are_checked_and_tools_are_resolved_from_globs():
    names = ["echo", "file.read", "file.write", "sql.query"]
    registry = ToolRegistry()
    for name in names:
        registry.register(_Named(name))
    defn = parse_definition(
        {"name": "w", "steps": [{"id": "a", "type": "agent", "goal": "g", "tools": ["file.*", "echo"]}]}, registry
    )
    spec = defn.step("a").agent
    assert resolve_tools(spec.tools, names) == ["echo", "file.read", "file.write"]
    assert spec.max_tool_iterations == 10 and spec.context_budget_kb == 50
    bad = {
        "id": "a",
        "type": "agent",
        "tools": ["nope.*", "shell.run"],
        "max_tool_iterations": 0,
        "context_budget_kb": "big",
        "output_schema": {"type": 3},
    }
    with pytest.raises(ValidationFailed) as info:
        parse_definition({"name": "w", "steps": [bad]}, registry)
    assert set(info.value.details) == {
        "steps[0].goal",
        "steps[0].tools[0]",
        "steps[0].tools[1]",
        "steps[0].max_tool_iterations",
        "steps[0].context_budget_kb",
        "steps[0].output_schema",
    }


class _Named:
    description, risk, params_schema = "a tool", "read", {"type": "object"}

    def __init__(self, name):
        self.name = name

    def run(self, params, ctx):
        return params


@pytest.mark.parametrize("text", ["CONFIRM_DATA: ok?", "REQUEST_APPROVAL: go"])
def test_a_question_with_calls_is_asked_after_the_calls(text):
    stop, _, host, _ = run(SPEC, Reply(text, (call("echo", {"q": 1}),)))
    assert host.runs == [("echo", {"q": 1})] and stop.kind == "waiting"


def test_a_result_is_shortened_only_by_what_the_request_is_over():
    spec = AgentSpec(goal="g", tools=("echo",))
    messages = opening(spec, "g")
    for i in range(3):
        messages.append(
            C.Message(seq=len(messages), role=C.ASSISTANT, turn=i + 1, tool_calls=[ToolCall(f"c{i}", "echo", "{}")])
        )
        messages.append(
            C.Message(seq=len(messages), role=C.TOOL, turn=i + 1, tool_call_id=f"c{i}", content=f"{i}" * 2000)
        )
    whole = len(json.dumps([m.to_api() for m in messages], separators=(",", ":")))
    sent, shortened = C.fit(messages, whole - 500)
    results = [m["content"] for m in sent if m["role"] == "tool"]
    assert [m.tool_call_id for m in shortened] == ["c0"]
    assert 1300 < results[0].index("\n[… trimmed") < 1500 and results[1:] == ["1" * 2000, "2" * 2000]
    assert len(json.dumps(sent, separators=(",", ":"), ensure_ascii=False)) <= whole - 500


def test_when_the_budget_cannot_be_met_the_latest_results_stay_whole():
    spec = AgentSpec(goal="g", tools=("echo",))
    messages = opening(spec, "g")
    for i in range(3):  # echo: each call's arguments are as large as its result, and are never cut
        big = json.dumps({"text": f"{i}" * 3000})
        messages.append(
            C.Message(seq=len(messages), role=C.ASSISTANT, turn=i + 1, tool_calls=[ToolCall(f"c{i}", "echo", big)])
        )
        messages.append(C.Message(seq=len(messages), role=C.TOOL, turn=i + 1, tool_call_id=f"c{i}", content=big))
    sent, shortened = C.fit(messages, 8 * 1024)
    assert [m.tool_call_id for m in shortened] == ["c0", "c1"]
    results = [m["content"] for m in sent if m["role"] == "tool"]
    assert "trimmed by Coach" in results[0] and "trimmed by Coach" in results[1]
    assert results[2] == json.dumps({"text": "2" * 3000})


# -- the probe's findings (#32): the budget counts what is posted; a tool result is sent once -------------------


def _posted(request: Request, model: str = "m") -> int:
    """The size of the body the openai client posts for `request` (compact JSON, UTF-8), measured here on its own."""
    body = {"model": model, "messages": request.messages, "tools": request.tools}
    return len(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def test_the_context_budget_counts_the_tool_definitions_sent():
    """The probe: 13 tools and a conversation just under 50 KB made a request of 56,724 bytes under a 51,200
    budget. The tool definitions are part of the request: results are shortened until the whole body fits."""
    wide = {
        f"field_{i}": {"type": "string", "description": "a documented field of the order record " * 3}
        for i in range(12)
    }
    tools = {
        f"shop.tool{i}": FakeTool(
            f"shop.tool{i}", {"type": "object", "properties": wide}, "Looks something up in the shop. " * 4
        )
        for i in range(13)
    }
    spec = AgentSpec(goal="g", tools=tuple(tools), context_budget_kb=50)
    host = MemoryHost(results={name: (lambda m: Result(True, "r" * 11_000)) for name in tools})
    provider = FakeProvider(*[Reply(None, (call("shop_tool0", {"field_0": str(i)}),)) for i in range(4)], Reply("done"))
    stop = AgentLoop(spec, provider, host, tools, model="m", key="k").run(opening(spec, "g"))
    assert stop.kind == "done"
    last = provider.requests[-1]
    definitions = len(json.dumps(last.tools, separators=(",", ":")))
    assert definitions > 12_000 and len(last.tools) == 13  # far from nothing, as in the probe
    messages_alone = len(json.dumps(last.messages, separators=(",", ":"), ensure_ascii=False).encode())
    assert messages_alone < 50 * 1024 - 10_000  # the messages alone would have fitted untouched
    assert all(_posted(r) <= 50 * 1024 for r in provider.requests), [_posted(r) for r in provider.requests]
    assert any("trimmed by Coach" in m["content"] for m in last.messages if m["role"] == "tool")
    assert last.body() == {"model": "m", "messages": last.messages, "tools": last.tools}  # what the provider posts


def _mcp_output(structured: dict | None = None, text: str = "", blocks: list | None = None) -> dict:
    from core.toolservers import step_output

    result = {"content": blocks if blocks is not None else [{"type": "text", "text": text}]}
    if structured is not None:
        result["structuredContent"] = structured
    return step_output(result)


def test_an_mcp_tool_result_reaches_the_llm_once_and_the_stored_message_is_unchanged():
    order = {"order_id": "A-1002", "customer": "Grace Hopper", "status": "lost"}
    with_structured = _mcp_output(order, text=json.dumps(order))
    text_only = _mcp_output(text="Grace Hopper's order A-1003 is late")
    image_only = _mcp_output(blocks=[{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}])
    outputs = {"shop.lookup": with_structured, "shop.note": text_only, "shop.photo": image_only}
    tools = {name: FakeTool(name) for name in outputs}
    spec = AgentSpec(goal="g", tools=tuple(tools))
    host = MemoryHost(results={name: (lambda m, out=out: Result(True, out)) for name, out in outputs.items()})
    provider = FakeProvider(
        Reply(None, (call("shop_lookup", {}), call("shop_note", {}), call("shop_photo", {}))), Reply("done")
    )
    messages = opening(spec, "g")
    AgentLoop(spec, provider, host, tools, model="m", key="k").run(messages)
    sent = {m["tool_call_id"]: m["content"] for m in provider.requests[-1].messages if m["role"] == "tool"}
    lookup, note, photo = (sent[m.tool_call_id] for m in tool_messages(messages))
    assert json.loads(lookup) == order and lookup.count("Grace Hopper") == 1  # structured content, once
    assert note == "Grace Hopper's order A-1003 is late"  # no structured content: the text, once
    assert json.loads(photo) == [{"type": "image", "mimeType": "image/png", "bytes": 6}]  # no text: the blocks
    # what is stored, and shown in the transcript, is the whole output as before
    stored = tool_messages(messages)
    assert stored[0].content == C.tool_content(with_structured) and stored[0].content.count("Grace Hopper") == 3
    assert stored[1].content == C.tool_content(text_only)
    # anything else is sent as it is stored
    assert C.llm_content('{"text":"a","other":1}') == '{"text":"a","other":1}'
    assert C.llm_content("error: the tool failed") == "error: the tool failed"


def test_a_shortened_mcp_result_is_its_one_representation_cut():
    order = {"order_id": "A-1", "notes": "n" * 5000}
    spec = AgentSpec(goal="g", tools=("echo",))
    messages = opening(spec, "g")
    for i in range(2):
        messages.append(
            C.Message(seq=len(messages), role=C.ASSISTANT, turn=i + 1, tool_calls=[ToolCall(f"c{i}", "echo", "{}")])
        )
        messages.append(
            C.Message(
                seq=len(messages),
                role=C.TOOL,
                turn=i + 1,
                tool_call_id=f"c{i}",
                content=C.tool_content(_mcp_output(order, text=json.dumps(order))),
            )
        )
    sent, shortened = C.fit(messages, 13 * 1024)
    assert shortened == []  # sent once each, both fit (stored three times over, they would not)
    assert all(json.loads(m["content"]) == order for m in sent if m["role"] == "tool")
    sent, shortened = C.fit(messages, 9 * 1024)  # the oldest is shortened: its one representation, cut
    assert [m.tool_call_id for m in shortened] == ["c0"]
    first = next(m["content"] for m in sent if m["role"] == "tool")
    assert first.startswith('{"order_id":"A-1","notes":"nnn') and "trimmed by Coach" in first
