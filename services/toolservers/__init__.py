"""Tools from MCP servers (the Model Context Protocol), per workspace: see core/toolservers.py for the rules.

loop.py       the asyncio loop thread the SDK runs on, and the gevent/eventlet-friendly wait
stdio.py      the stdio transport (the server process started with posix_spawn)
connection.py one session with a server: its transport, handshake, cancellable call ids, why it ended
pool.py       sessions pooled per server, reconnected, calls with timeouts and cancellation
source.py     the registry's source of a workspace's MCP tools, and the tool object steps call
secrets.py    headers encrypted at rest
service.py    the servers' CRUD and refresh, audited
"""
