"""Tools from MCP servers (the Model Context Protocol), per workspace: see core/toolservers.py for the rules.

stdio.py      the stdio transport (the server process started with posix_spawn, its exit status kept)
connection.py one session with a server: its transport, handshake, cancellable call ids, why it ended
pool.py       sessions pooled per server, reconnected, calls with timeouts and cancellation (in the MCP process)
remote.py     the pool as the web process and the workers reach it: the MCP process's internal routes over HTTP
source.py     the registry's source of a workspace's MCP tools, and the tool object steps call
secrets.py    headers encrypted at rest
service.py    the servers' CRUD and refresh, audited
"""
