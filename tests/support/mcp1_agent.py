"""A 1.x-era agent of the gateway: the MCP Python SDK 1.x's own streamable-HTTP client and ClientSession (the
initialize handshake), run by .venv-mcp1's Python (tests/support/mcp1.py) as a subprocess, since Coach's venv has
mcp 2.x. Nothing of Coach is imported here.

    .venv-mcp1/bin/python tests/support/mcp1_agent.py URL TOKEN < steps.json > answers.json

steps: [["list"], ["call", tool, arguments, with_progress], ...]. Answers: {"protocol_version": ...,
"server": {...}, "steps": [the result of each step, as the SDK dumps it (by alias), with "progress" when asked]}.

A call step may carry a fifth item, the answer its user gives when the server asks (an elicitation/create request):
{"action": "accept" | "decline" | "cancel", "content": {...}}; the session then declares the elicitation capability, and
the step's answer has "elicitations": [{"message", "requestedSchema"}] it was asked. With no step carrying one, the
session declares no elicitation (the SDK's default).
"""

import asyncio
import json
import sys

import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str, steps: list) -> dict:
    client = httpx.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, trust_env=False, timeout=httpx.Timeout(30, read=60)
    )
    answers: dict = {"steps": []}
    replies = [step[4] for step in steps if step[0] == "call" and len(step) > 4]
    asked: list = []

    async def on_elicit(context, params):
        asked.append({"message": params.message, "requestedSchema": params.requestedSchema})
        reply = replies.pop(0) if replies else {"action": "cancel"}
        return types.ElicitResult(action=reply["action"], content=reply.get("content"))

    extra = {"elicitation_callback": on_elicit} if replies else {}
    async with client, streamable_http_client(url, http_client=client) as (read, write, _):
        async with ClientSession(read, write, **extra) as session:
            init = await session.initialize()
            answers["protocol_version"] = init.protocolVersion
            answers["server"] = init.serverInfo.model_dump(mode="json", exclude_none=True)
            for step in steps:
                if step[0] == "list":
                    result = await session.list_tools()
                    answers["steps"].append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
                    continue
                _, tool, arguments, with_progress = step[:4]
                progress: list = []
                asked.clear()

                async def on_progress(done, total, message, progress=progress):
                    progress.append([done, total, message])

                result = await session.call_tool(
                    tool, arguments, progress_callback=on_progress if with_progress else None
                )
                dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                if with_progress:
                    dumped["progress"] = progress
                if len(step) > 4:
                    dumped["elicitations"] = list(asked)
                answers["steps"].append(dumped)
    return answers


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], json.load(sys.stdin)))))
