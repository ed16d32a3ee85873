"""The demo's MCP server: the shop's orders, over stdio, built with the official SDK (2.x: MCPServer, formerly FastMCP).

`make run` allows its command line (COACH_MCP_STDIO_ALLOW) and the demo adds it to the default workspace as the
tool server `orders`, whose tools the "Refund review with order lookup" workflow calls (`orders.lookup`).
Run it alone with `python demo/orders_mcp.py` (it speaks JSON-RPC on stdin/stdout).
"""

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

mcp = MCPServer("orders", log_level="WARNING")


class Order(BaseModel):
    order_id: str
    customer: str
    total: float
    currency: str
    status: str


ORDERS = {
    "A-1001": Order(order_id="A-1001", customer="Ada Lovelace", total=42.5, currency="GBP", status="delivered"),
    "A-1002": Order(order_id="A-1002", customer="Grace Hopper", total=310.0, currency="GBP", status="lost"),
    "A-2001": Order(order_id="A-2001", customer="Ken Thompson", total=19.99, currency="GBP", status="damaged"),
}


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def lookup(order_id: str) -> Order:
    """Look an order up by its id: customer, total, currency and delivery status."""
    order = ORDERS.get(order_id)
    if order is None:
        raise ToolError(f"there is no order {order_id}")  # its message reaches the client
    return order


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def list_orders(status: str | None = None) -> dict[str, list[str]]:
    """The ids of the orders, all of them or those with this status."""
    return {"order_ids": [o.order_id for o in ORDERS.values() if status in (None, o.status)]}


if __name__ == "__main__":
    mcp.run("stdio")
