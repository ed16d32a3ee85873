"""A 1.x-era agent of the gateway: the MCP Python SDK 1.x's own streamable-HTTP client and ClientSession (the
initialize handshake), run by .venv-mcp1's Python (tests/support/mcp1.py) as a subprocess, since Coach's venv has
mcp 2.x. Nothing of Coach is imported here.

    .venv-mcp1/bin/python tests/support/mcp1_agent.py URL TOKEN < steps.json > answers.json

steps: [["list"], ["call", tool, arguments, with_progress], ...]. Answers: {"protocol_version": ...,
"server": {...}, "steps": [the result of each step, as the SDK dumps it (by alias), with "progress" when asked]}.
"""

import asyncio
import json
import sys

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str, steps: list) -> dict:
    client = httpx.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, trust_env=False, timeout=httpx.Timeout(30, read=60)
    )
    answers: dict = {"steps": []}
    async with client, streamable_http_client(url, http_client=client) as (read, write, _):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            answers["protocol_version"] = init.protocolVersion
            answers["server"] = init.serverInfo.model_dump(mode="json", exclude_none=True)
            for step in steps:
                if step[0] == "list":
                    result = await session.list_tools()
                    answers["steps"].append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
                    continue
                _, tool, arguments, with_progress = step
                progress: list = []

                async def on_progress(done, total, message, progress=progress):
                    progress.append([done, total, message])

                result = await session.call_tool(
                    tool, arguments, progress_callback=on_progress if with_progress else None
                )
                dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                if with_progress:
                    dumped["progress"] = progress
                answers["steps"].append(dumped)
    return answers


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], json.load(sys.stdin)))))
