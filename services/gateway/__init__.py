"""The MCP gateway: Coach between any agent and its tools (docs/mcp-gateway.md, docs/mcp-gateway.md).

identities.py  agent identities: named per workspace, a bearer token shown once and stored hashed, revoked by admins
calls.py       one tools/call judged by the policy: allowed (forwarded), denied, or held for a review (a row), and
               the held call's decision delivered once, forwarded at most once per approval; all audited
builtins.py    the built-in tools an admin exposes to agents, as `coach.<tool>`, and how a call of one runs
server.py      the MCP server (the official SDK's low-level Server + StreamableHTTPSessionManager, stateless) on an
               asyncio loop thread, and the WSGI side that serves it at /mcp inside Coach's own app (bridge.py)
bridge.py      WSGI -> ASGI for /mcp under gevent, eventlet or threads: the request's (green) thread authenticates,
               reads the body, streams the answer, and runs the handlers' database work for them
"""
