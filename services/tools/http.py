"""http.request: one HTTP call with httpx, bounded by the step's deadline, confined to the hosts the workspace
may reach (core/outbound).

Every hop is checked after DNS resolution, and the connection goes to the very address that was checked
(`VettedTransport`: the URL's host is replaced by that address while the Host header and TLS's SNI and
certificate check keep the name), so a name that resolves to something else a moment later cannot slip through.
Redirects are followed here, one hop at a time, each checked the same way, at most MAX_REDIRECTS of them.
Proxy settings from the environment are not used: a proxy would resolve and connect on its own.
Every request carries the step run's idempotency key as the Idempotency-Key header, unless the step sets one.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import time
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
import httpx2

from config import Settings
from core.outbound import Address, Entry, parse_entries, parse_entry, refusal
from core.tools import ToolContext, ToolError, require_workspace

from .basic import budget, seconds_text, truncate_text
from .tenancy import IdsOnly, Workspaces

# JSON is parsed from the whole body, so the body needs its own (larger) cap than `text`.
MAX_BODY_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)


def _is_json(content_type: str) -> bool:
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime == "application/json" or mime.endswith("+json")


class OutboundRefused(ToolError):
    """The outbound rules refuse this host (the message names it and why)."""


def resolve(host: str, port: int) -> list[Address]:
    """Every address `host` stands for (an IP literal stands for itself), in the resolver's order."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return [ipaddress.ip_address(bare)]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(bare, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(f"cannot resolve host {host!r}: {getattr(exc, 'strerror', None) or exc}") from None
    found: list[Address] = []
    for info in infos:
        text = str(info[4][0]).split("%", 1)[0]  # a link-local address's zone is not part of the address
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        if address not in found:
            found.append(address)
    if not found:
        raise ToolError(f"cannot resolve host {host!r}: no address")
    return found


class Vetter:
    """Resolves a URL's host and picks the first address the outbound rules let it reach, or refuses."""

    def __init__(
        self,
        server_allow: tuple[Entry, ...],
        allow: tuple[Entry, ...],
        deny: tuple[Entry, ...],
        resolver: Callable[[str, int], list[Address]] = resolve,
    ):
        self.server_allow, self.allow, self.deny, self.resolver = server_allow, allow, deny, resolver

    def address(self, url: httpx.URL | httpx2.URL) -> Address:
        host = url.raw_host.decode("ascii")
        port = url.port or (443 if url.scheme == "https" else 80)
        reasons = []
        for address in self.resolver(host, port):
            why = refusal(host, address, self.server_allow, self.allow, self.deny)
            if why is None:
                return address
            reasons.append(why)
        raise OutboundRefused(f"outbound request to {url.host} refused: {reasons[0]}")


class AddressVetter(Protocol):
    """What a VettedTransport asks: the address a URL may be reached at (a Vetter, or one that reads the workspace's
    rules at each request: services.agents.llm_provider.LiveVetter), OutboundRefused when none."""

    def address(self, url: httpx.URL) -> Address: ...


class VettedTransport(httpx.BaseTransport):
    """Connects every request to an address the Vetter approved, never resolving the name a second time."""

    def __init__(self, vetter: AddressVetter):
        self.vetter = vetter
        self.inner = httpx.HTTPTransport(retries=0)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(_pinned(request, self.vetter.address(request.url)))

    def close(self) -> None:
        self.inner.close()


class AsyncVettedTransport(httpx2.AsyncBaseTransport):
    """VettedTransport for the MCP SDK's HTTP client (MCP servers over streamable HTTP; the SDK takes httpx2, the
    next-generation fork of httpx, with the same API): every request is checked against the rules as they are now
    (`vetter()` makes the Vetter, reading the workspace's lists), the name resolved and checked in a worker thread
    (DNS and the lists' read block), the connection made to the address checked."""

    def __init__(self, vetter: Callable[[], Vetter]):
        self.vetter = vetter
        self.inner = httpx2.AsyncHTTPTransport(retries=0)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        address = await asyncio.to_thread(lambda: self.vetter().address(url))
        return await self.inner.handle_async_request(_pinned(request, address, httpx2))

    async def aclose(self) -> None:
        await self.inner.aclose()


def _pinned(request, address: Address, lib=httpx):
    """The request sent to `address`, with the name kept for the Host header, TLS's SNI and the certificate check
    (`lib`: httpx, or httpx2 for the MCP SDK's client)."""
    url = request.url
    extensions = dict(request.extensions)
    if url.scheme == "https" and not _is_ip(url.raw_host.decode("ascii")):
        extensions["sni_hostname"] = url.raw_host.decode("ascii")
    return lib.Request(
        request.method,
        url.copy_with(host=str(address)),
        headers=request.headers,
        stream=request.stream,
        extensions=extensions,
    )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


def _same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    return (a.scheme, a.raw_host, a.port) == (b.scheme, b.raw_host, b.port)


class HttpRequestTool:
    # it stops by itself at ctx.deadline, so the engine runs it without a watchdog thread
    honours_deadline = True

    name = "http.request"
    description = (
        "Makes an HTTP request and returns status, headers, text and parsed JSON. "
        "A non-2xx status is reported with ok=false, not as a failure."
    )
    risk = "external"
    params_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "method": {"enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"], "default": "GET"},
            "url": {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}},
            "params": {
                "type": "object",
                "additionalProperties": {"type": ["string", "number", "boolean", "null", "array"]},
            },
            "json": {},
            "body": {"type": "string"},
            "timeout_s": {"type": "number", "exclusiveMinimum": 0},
        },
        "required": ["url"],
        "additionalProperties": False,
        # Both would be sent as the body; refusing early beats silently dropping one.
        "not": {"required": ["json", "body"]},
    }

    def __init__(
        self,
        settings: Settings,
        workspaces: Workspaces | None = None,
        resolver: Callable[[str, int], list[Address]] = resolve,
    ):
        self.settings = settings
        self.workspaces = workspaces or IdsOnly()
        self.resolver = resolver
        try:
            self.server_allow = parse_entries(settings.outbound_allow)
        except ValueError as exc:
            raise ValueError(f"COACH_OUTBOUND_ALLOW: {exc}") from None

    def _vetter(self, workspace_id: str) -> Vetter:
        lists = self.workspaces.outbound(workspace_id)
        return Vetter(
            self.server_allow,
            tuple(parse_entry(e) for e in lists.allow),
            tuple(parse_entry(e) for e in lists.deny),
            self.resolver,
        )

    def run(self, params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        method = str(params.get("method") or "GET").upper()
        url = params.get("url")
        if not isinstance(url, str) or urlsplit(url).scheme.lower() not in ("http", "https"):
            raise ToolError(f"url must be an http:// or https:// address, got {url!r}")
        if "json" in params and "body" in params:
            raise ToolError("give either json or body, not both")
        workspace = require_workspace(ctx, self.name)
        timeout = budget(ctx, params.get("timeout_s") or self.settings.http_timeout_s)
        deadline = time.monotonic() + timeout

        headers = dict(params.get("headers") or {})
        if ctx.idempotency_key and not any(k.lower() == "idempotency-key" for k in headers):
            # the same for every try of this run of the step (a re-run after a crash included): a receiver that
            # honours it applies the call once (README "Effects"); a step's own header wins
            headers["Idempotency-Key"] = ctx.idempotency_key
        body: dict[str, Any] = {}
        if "json" in params:
            body["json"] = params["json"]
        elif "body" in params:
            body["content"] = params["body"].encode("utf-8")

        started = time.monotonic()
        current = url
        redirects = 0
        try:
            transport = VettedTransport(self._vetter(workspace))
            with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False, transport=transport) as client:
                request = client.build_request(
                    method, url, headers=headers, params=params.get("params") or None, **body
                )
                while True:
                    current = str(request.url)
                    resp = client.send(request, stream=True)
                    try:
                        location = resp.headers.get("location")
                        if resp.status_code in _REDIRECTS and location:
                            if redirects >= MAX_REDIRECTS:
                                raise ToolError(
                                    f"{method} {url} redirected more than {MAX_REDIRECTS} times (last to {location})"
                                )
                            redirects += 1
                            request = self._next_hop(client, request, resp.status_code, location, headers, body)
                            continue
                        body_bytes, complete = self._read_body(resp, deadline, method, current, timeout)
                    finally:
                        resp.close()
                    break
        except httpx.TimeoutException:
            raise ToolError(f"{method} {current} timed out after {seconds_text(timeout)}") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"{method} {current} failed: {exc or type(exc).__name__}") from None
        elapsed_ms = (time.monotonic() - started) * 1000

        encoding = resp.encoding or "utf-8"
        parsed = None
        if complete and body_bytes and _is_json(resp.headers.get("content-type", "")):
            try:
                parsed = json.loads(body_bytes.decode(encoding, errors="replace"))
            except ValueError:
                parsed = None
        return {
            "status": resp.status_code,
            "headers": {k.lower(): v for k, v in resp.headers.items()},
            "json": parsed,
            "text": truncate_text(body_bytes, encoding),
            "ok": resp.is_success,
            "elapsed_ms": round(elapsed_ms, 3),
            "url": current,
            "redirects": redirects,
        }

    @staticmethod
    def _next_hop(
        client: httpx.Client,
        request: httpx.Request,
        status: int,
        location: str,
        headers: dict[str, str],
        body: dict[str, Any],
    ) -> httpx.Request:
        """The request a redirect asks for (as browsers and httpx do it); the transport checks its host again."""
        try:
            target = request.url.join(location)
        except httpx.InvalidURL as exc:
            raise ToolError(
                f"{request.method} {request.url} redirected to an invalid address {location!r}: {exc}"
            ) from None
        if target.scheme not in ("http", "https"):
            raise ToolError(f"{request.method} {request.url} redirected to {location!r}, not an http(s) address")
        method = request.method
        if status == 303 and method != "HEAD" or status in (301, 302) and method == "POST":
            method = "GET"
        keep = {
            k: v
            for k, v in headers.items()
            if not (method != request.method and k.lower() in ("content-type", "content-length"))
        }
        if not _same_origin(target, request.url):  # credentials are for the host they were given to
            keep = {
                k: v for k, v in keep.items() if k.lower() not in ("authorization", "cookie", "proxy-authorization")
            }
        return client.build_request(method, target, headers=keep, **(body if method == request.method else {}))

    @staticmethod
    def _read_body(resp: httpx.Response, deadline: float, method: str, url: str, timeout: float) -> tuple[bytes, bool]:
        # httpx timeouts apply per network operation; a server trickling bytes could
        # outlive the step, so the whole read is also checked against one deadline.
        chunks: list[bytes] = []
        size = 0
        for chunk in resp.iter_bytes():
            if time.monotonic() > deadline:
                raise ToolError(f"{method} {url} timed out after {seconds_text(timeout)}")
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                return b"".join(chunks), False
        return b"".join(chunks), True
