"""A 1.x-era upstream MCP server: the MCP Python SDK 1.x's FastMCP (the initialize handshake only), run by
.venv-mcp1's Python (tests/support/mcp1.py), for Coach's 2.x client to meet over stdio and streamable HTTP.
Nothing of Coach is imported here.

    .venv-mcp1/bin/python tests/support/mcp1_server.py old               # over stdio
    .venv-mcp1/bin/python tests/support/mcp1_server.py old --http PORT   # streamable HTTP on 127.0.0.1:PORT/mcp

`lookup` (read-only, structured output), `add` (text), `toggle_beta` (adds or removes `beta` and tells the client
with notifications/tools/list_changed on the session, as the handshake era does).
"""

import argparse

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ToolAnnotations
from pydantic import BaseModel


class Order(BaseModel):
    order_id: str
    customer: str
    status: str


def old_server(name: str, **settings) -> FastMCP:
    mcp = FastMCP(name, log_level="WARNING", **settings)

    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
    def lookup(order_id: str) -> Order:
        """Look an order up by its id."""
        return Order(order_id=order_id, customer="Ada", status="delivered")

    @mcp.tool()
    def add(a: int, b: int) -> str:
        """Add two numbers (answers in text)."""
        return f"{a + b}"

    beta = {"present": False}

    @mcp.tool()
    async def toggle_beta(ctx: Context) -> str:
        """Adds the tool `beta` when it is absent, removes it when present; tells the client the list changed."""
        if not beta["present"]:
            mcp.add_tool(lambda: "beta here", name="beta", description="Appears and disappears.")
        else:
            mcp.remove_tool("beta")
        beta["present"] = not beta["present"]
        await ctx.session.send_tool_list_changed()
        return "added" if beta["present"] else "removed"

    return mcp


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=("old",))
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--name", default="old")
    args = parser.parse_args()
    if args.http:
        old_server(args.name, host="127.0.0.1", port=args.http).run("streamable-http")
    else:
        old_server(args.name).run("stdio")
