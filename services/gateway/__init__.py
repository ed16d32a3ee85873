"""The MCP gateway: Coach between any agent and its tools (docs/mcp-gateway.md, docs/mcp-gateway.md).

identities.py  agent identities: named per workspace, a bearer token shown once and stored hashed, revoked by admins
calls.py       one tools/call judged by the policy: allowed (forwarded), denied, or held for a review (a row), and
               the held call's decision delivered once, forwarded at most once per approval; all audited
builtins.py    the built-in tools an admin exposes to agents, as `coach.<tool>`, and how a call of one runs
server.py      the MCP server (the official SDK's low-level Server + StreamableHTTPSessionManager, stateless) as the
               ASGI app of /mcp in Coach's MCP process (asgi.py, on uvicorn); its blocking work in worker threads
relay.py       the MCP process's notifier: the events the web app shows, sent to the web process to push
"""
