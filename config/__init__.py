"""Every COACH_* setting, read from the environment in this one place."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SECRET = "dev-secret-change-me"


def _bool(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Settings:
    env: str = "development"  # COACH_ENV: development | production | test
    host: str = "127.0.0.1"
    port: int = 5000
    database_url: str = ""  # COACH_DATABASE_URL; default: SQLite file under instance/
    # COACH_DB_POOL_SIZE, COACH_DB_MAX_OVERFLOW: this process's connections to PostgreSQL (kept, and more when busy);
    # every process's sum must stay under the server's max_connections (docs/configuration.md)
    db_pool_size: int = 10
    db_max_overflow: int = 20
    instance_dir: str = str(ROOT / "instance")
    data_dir: str = ""  # COACH_DATA_DIR: holds one folder per workspace (<data>/<workspace id>/); default instance/data
    data_quota_mb: float = 100.0  # COACH_DATA_QUOTA_MB: most a workspace's data folder may hold (file.write); 0 = none
    file_read_max_mb: float = 10.0  # COACH_FILE_READ_MAX_MB: the most file.read returns (its max_bytes' maximum)
    secret_key: str = DEFAULT_SECRET
    # COACH_ASYNC_MODE: gevent | threading | eventlet. gevent is the fastest under load (README "Async mode")
    async_mode: str = "gevent"
    max_body_mb: float = 10.0
    demo: bool = True
    shell_allow: tuple[str, ...] = ()  # COACH_SHELL_ALLOW: comma-separated command names shell.run may start
    # COACH_SQL_CONNECTIONS: JSON {name: {"url": ..., "workspaces": [id or slug, ...]}} (services/tools/sql.py)
    sql_connections: dict[str, Any] = field(default_factory=dict)
    http_timeout_s: float = 30.0
    # COACH_EVAL_TIME_MS: the CPU time one evaluation of user-written code (a template, condition or schema check)
    # may take before its step fails; under gevent/eventlet nothing else runs meanwhile (README "Budgets")
    eval_time_ms: float = 10.0
    # COACH_OUTBOUND_ALLOW: comma-separated hosts / *.suffix / IPs / CIDRs every workspace may reach although they
    # are private, loopback … (refused by default; core/outbound)
    outbound_allow: tuple[str, ...] = ()
    # COACH_MCP_STDIO_ALLOW: comma-separated command lines an admin may run as stdio MCP servers; a server's command
    # must start with one of them, word for word (e.g. `npx -y @modelcontextprotocol/server-github`)
    mcp_stdio_allow: tuple[str, ...] = ()
    mcp_call_timeout_s: float = 60.0  # COACH_MCP_CALL_TIMEOUT_S: the longest one MCP tool call may take
    mcp_connect_timeout_s: float = 15.0  # COACH_MCP_CONNECT_TIMEOUT_S: start/connect + handshake of an MCP server
    # the MCP gateway (docs/mcp-gateway.md). COACH_GATEWAY_HOLD_S: how long a tools/call held for a review keeps the
    # agent's request open (progress notifications every COACH_GATEWAY_PROGRESS_S when the agent sent a progressToken)
    # before it answers that the call awaits review; keep it below the agent's own tool-call timeout
    gateway_hold_s: float = 45.0
    gateway_progress_s: float = 5.0
    # COACH_GATEWAY_POLL_S: how often a held call looks at its review; a decision made on the same server answers it
    # at once, this is for one made on another server of a cluster (or the agent's identity revoked meanwhile)
    gateway_poll_s: float = 0.5
    # COACH_GATEWAY_CONFIRM_S: how long the person at the agent has to answer a confirm rule's question: an
    # elicitation/create request waits this long (then the rule's fallback applies), and a 2026-07-28 question's
    # sealed requestState expires after it
    gateway_confirm_s: float = 300.0
    gateway_result_max_kb: float = 256.0  # COACH_GATEWAY_RESULT_MAX_KB: the most of a tool's result an agent receives
    # Coach's MCP process (asgi.py, docs/design.md "Processes"): the gateway and the client pools of MCP servers, on
    # uvicorn. COACH_MCP_PORT: the port it listens on (default COACH_PORT + 100); COACH_MCP_URL: where the web
    # process and the workers reach it (set: `python wsgi.py` starts no MCP process of its own; default
    # http://<host>:<mcp port>, started by wsgi.py); COACH_WEB_URL: where the MCP process pushes the events the web
    # app shows (default http://<host>:<port>); COACH_MCP_TOKEN: the bearer token of the internal routes both sides
    # serve (wsgi.py makes one per start when unset; several machines set one of their own)
    mcp_port: int = 0
    mcp_url: str = ""
    web_url: str = ""
    mcp_token: str = ""
    runner_workers: int = 4  # COACH_RUNNER_WORKERS: background tasks advancing executions at once
    # COACH_LEASE_S: how long a step's lease holds without renewal (renewed every third of it while the tool runs);
    # COACH_LEASE_SCAN_S: how often every instance looks for expired leases to take over (README "Several machines")
    lease_s: float = 10.0
    lease_scan_s: float = 3.0
    # COACH_INSTANCE_ID: this instance's name in leases, unique among running instances; default <host>:<pid>:<random>
    instance_id: str = ""
    message_queue: str = ""  # COACH_MESSAGE_QUEUE: e.g. redis://127.0.0.1:6379/0 for several servers
    # COACH_QUEUE_CHANGED_S: a workspace's room hears its executions' changes in one `queue_changed` (and each
    # workflow's newest `metrics_update`) per this interval, the first at once (docs/api.md#real-time-socketio);
    # 0: after every transaction
    queue_changed_s: float = 0.25
    # COACH_BROKER_URL: e.g. redis://127.0.0.1:6379/1: slow tools run on Celery workers (services/worker.py)
    broker_url: str = ""
    # COACH_WORKER_REDELIVER_S: when Redis hands a task of a worker that died whole to another worker (the step's
    # lease hands the step over sooner; services/worker.py)
    worker_redeliver_s: float = 60.0
    spot_check_rate: float = 0.05
    # COACH_UNDO_WINDOW_S: how long a decision on a risky call (external or destructive tool, or flagged by a policy)
    # is held before its step runs, so that it can be taken back (docs/web-app.md "Undo"); 0: never held. A
    # workspace's admin may set its own (PUT /api/workspace/undo)
    undo_window_s: float = 10.0
    # COACH_APPROVAL_SCAN_S: how often the runner looks for approvals whose deadline passed (0: only at start-up)
    approval_scan_s: float = 1.0
    # COACH_HOOK_RATE_LIMIT: deliveries one incoming webhook takes (Flask-Limiter's notation; empty: no limit), and
    # the same scan fires due cron schedules (docs/triggers.md)
    hook_rate_limit: str = "60 per minute"
    random_seed: int | None = None  # COACH_RANDOM_SEED: makes AUTO spot checks deterministic
    frontend_dist: str = str(ROOT / "frontend" / "dist")
    log_level: str = "INFO"
    admin_email: str = ""  # COACH_ADMIN_EMAIL + COACH_ADMIN_PASSWORD: the first admin, created when no user exists
    admin_password: str = ""
    # COACH_PUBLIC_ORIGINS: comma-separated origins (scheme://host[:port]) whose pages may open a Socket.IO
    # connection. Unset: the request's own origin (its Host) only; never any origin.
    public_origins: tuple[str, ...] = ()
    # agent steps (docs/agent-steps.md): an OpenAI-compatible chat completions server (OpenAI, vLLM, Ollama, llama.cpp).
    # COACH_LLM_BASE_URL e.g. http://127.0.0.1:11434/v1 (Ollama); unset: agent steps fail, saying what to set
    llm_base_url: str = ""
    llm_api_key: str = ""  # COACH_LLM_API_KEY: sent as the bearer token (servers that want none get a placeholder)
    llm_model: str = ""  # COACH_LLM_MODEL: the model of agent steps that do not name their own
    llm_timeout_s: float = 120.0  # COACH_LLM_TIMEOUT_S: one request to the LLM server
    # COACH_LLM_MAX_RETRIES: retries of a request answered 408/409/429/5xx or not answered, with exponential
    # backoff that honours Retry-After (the openai client's)
    llm_max_retries: int = 3
    # notifications (docs/notifications.md). Email is sent when COACH_SMTP_HOST is set; COACH_SMTP_STARTTLS upgrades
    # the connection, COACH_SMTP_USER/PASSWORD log in; COACH_SMTP_FROM is the sender's address
    smtp_host: str = ""
    smtp_port: int = 25
    smtp_user: str = ""
    smtp_password: str = ""
    smtp_from: str = "coach@localhost"
    smtp_starttls: bool = False
    smtp_timeout_s: float = 10.0
    # COACH_PUBLIC_URL: where people reach this server, for the links in messages (default http://<host>:<port>)
    public_url: str = ""
    notify_scan_s: float = 2.0  # COACH_NOTIFY_SCAN_S: how often the outbox is sent (0: never by the server)
    notify_lease_s: float = 120.0  # COACH_NOTIFY_LEASE_S: a claimed notification's lease, retried after it
    notify_link_ttl_s: float = 86400.0  # COACH_NOTIFY_LINK_TTL_S: how long an approve / reject link works
    notify_deadline_near_s: float = 600.0  # COACH_NOTIFY_DEADLINE_NEAR_S: "deadline near" this long before it
    # COACH_NOTIFY_LINK_AMOUNT_MAX: a review whose params name an amount above this opens the web app instead of
    # deciding from a link (0: no limit; destructive tools always do)
    notify_link_amount_max: float = 0.0
    webhook_timeout_s: float = 10.0  # COACH_WEBHOOK_TIMEOUT_S: one outgoing webhook delivery
    # COACH_SLACK_API_URL: the Slack Web API's base URL (slack_sdk's WebClient base_url; tests point it at loopback)
    slack_api_url: str = "https://slack.com/api/"
    # Web Push (docs/notifications.md "Web Push"). COACH_VAPID_PRIVATE_KEY: this installation's VAPID private key
    # (base64url raw 32 bytes, or PEM/DER); empty: a key pair is made once and kept in the database, sealed.
    # COACH_VAPID_SUBJECT: the contact the push services see (mailto: or https:); default mailto:<COACH_SMTP_FROM>.
    # COACH_PUSH_TTL_S: how long a push service keeps a message for a browser that is offline
    vapid_private_key: str = ""
    vapid_subject: str = ""
    push_ttl_s: int = 86400

    @property
    def resolved_public_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def resolved_mcp_port(self) -> int:
        return self.mcp_port or self.port + 100

    @property
    def _local_host(self) -> str:
        """This machine's address for a process of its own (a server bound to every address is reached on loopback)."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host

    @property
    def resolved_mcp_url(self) -> str:
        return (self.mcp_url or f"http://{self._local_host}:{self.resolved_mcp_port}").rstrip("/")

    @property
    def resolved_web_url(self) -> str:
        return (self.web_url or f"http://{self._local_host}:{self.port}").rstrip("/")

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{Path(self.instance_dir) / 'coach.db'}"

    @property
    def resolved_data_dir(self) -> str:
        return self.data_dir or str(Path(self.instance_dir) / "data")

    @property
    def data_quota_bytes(self) -> int | None:
        return int(self.data_quota_mb * 1024 * 1024) if self.data_quota_mb > 0 else None

    @property
    def file_read_max_bytes(self) -> int:
        return max(1, int(self.file_read_max_mb * 1024 * 1024))

    @property
    def max_body_bytes(self) -> int:
        return int(self.max_body_mb * 1024 * 1024)

    def with_overrides(self, **overrides: Any) -> Settings:
        return replace(self, **overrides)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f"COACH_{f.name.upper()}")
            if raw is None:
                continue
            if f.name in ("shell_allow", "outbound_allow", "mcp_stdio_allow"):
                values[f.name] = tuple(p.strip() for p in raw.split(",") if p.strip())
            elif f.name == "public_origins":
                values[f.name] = tuple(p.strip().rstrip("/") for p in raw.split(",") if p.strip())
            elif f.name == "sql_connections":
                values[f.name] = json.loads(raw) if raw.strip() else {}
            elif f.name == "random_seed":
                values[f.name] = int(raw) if raw.strip() else None
            elif f.type in ("int",):
                values[f.name] = int(raw)
            elif f.type in ("float",):
                values[f.name] = float(raw)
            elif f.type in ("bool",):
                values[f.name] = _bool(raw)
            else:
                values[f.name] = raw
        return cls(**values)
