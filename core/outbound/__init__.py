"""Which hosts a workspace's outbound requests (http.request) may reach: pure rules, no DNS, no sockets.

The services resolve a URL's host and ask `refusal(host, address, ...)` about every address they might connect to,
before connecting and again on every redirect (services/tools/http.py).

An entry of a list is one of:

- a host name, `api.example.com` (matches that name only, case-insensitively; IDNs in either form);
- `*.example.com`: any name under example.com (not example.com itself);
- `*`: any host;
- an IP address `203.0.113.7` / `2001:db8::1`, or a network in CIDR form `10.0.0.0/8` / `fd00::/8`.

The rules, in order:

1. an address or name on the workspace's **deny** list is refused;
2. a *special* address (unspecified, loopback, link-local, multicast, private, reserved, or otherwise not globally
   routable; also IPv4-mapped, NAT64, 6to4 and Teredo IPv6 forms of such IPv4 addresses) is refused unless the
   **server's** allow list (COACH_OUTBOUND_ALLOW) names it: a workspace cannot open the server's own network;
3. when the workspace's **allow** list is not empty, only what it names is reached (the server's list does not
   widen it: a workspace that lists its hosts and also needs, say, 127.0.0.1 lists that too);
4. anything else (a public address) is reached.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

MAX_ENTRIES = 200
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


@dataclass(frozen=True)
class OutboundLists:
    """A workspace's own lists, as stored (normalised entries)."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, list[str]]:
        return {"allow": list(self.allow), "deny": list(self.deny)}


@dataclass(frozen=True)
class Entry:
    text: str
    kind: str  # any | host | suffix | network
    value: Any = None

    def matches(self, host: str | None, addresses: Iterable[Address]) -> bool:
        if self.kind == "any":
            return True
        if self.kind == "network":
            return any(a.version == self.value.version and a in self.value for a in addresses)
        if host is None:
            return False
        if self.kind == "host":
            return host == self.value
        return host.endswith("." + self.value)


def _host_name(text: str) -> str:
    """A DNS name in its ASCII (IDNA) form, lower case, without a trailing dot; ValueError when it is none."""
    name = text.strip().rstrip(".").lower()
    if not name:
        raise ValueError("empty host name")
    try:
        name = name.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValueError(f"{text!r} is not a valid host name") from None
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise ValueError(f"{text!r} is not a host name, `*.suffix`, IP address or CIDR network")
    return name


def parse_entry(text: Any) -> Entry:
    """One list entry, normalised; ValueError with a message for users when it is nonsense."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("must be a non-empty string")
    raw = text.strip()
    if raw == "*":
        return Entry("*", "any")
    bare = raw[1:-1] if raw.startswith("[") and raw.endswith("]") else raw
    try:
        if "/" in bare:
            network = ipaddress.ip_network(bare, strict=False)
            return Entry(str(network), "network", network)
        address = ipaddress.ip_address(bare)
        network = ipaddress.ip_network(address)
        return Entry(str(address), "network", network)
    except ValueError:
        if "/" in bare or ":" in bare:
            raise ValueError(f"{raw!r} is not a valid IP address or CIDR network") from None
    if raw.startswith("*."):
        suffix = _host_name(raw[2:])
        return Entry(f"*.{suffix}", "suffix", suffix)
    if "*" in raw:
        raise ValueError(f"{raw!r}: a wildcard may only be `*` or a leading `*.`")
    name = _host_name(raw)
    return Entry(name, "host", name)


def parse_entries(values: Iterable[Any]) -> tuple[Entry, ...]:
    return tuple(parse_entry(v) for v in values)


def validate_lists(body: Any) -> tuple[OutboundLists | None, dict[str, list[str]]]:
    """A PUT body {"allow": [...], "deny": [...]} → (lists, {}) or (None, {field path: [messages]})."""
    if not isinstance(body, dict):
        return None, {"(body)": ["must be an object with allow and deny lists"]}
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(body) - {"allow", "deny"})
    for key in unknown:
        errors.setdefault(key, []).append("unknown field; only allow and deny")
    out: dict[str, tuple[str, ...]] = {}
    for key in ("allow", "deny"):
        values = body.get(key, [])
        if not isinstance(values, list):
            errors.setdefault(key, []).append("must be a list of host names, `*.suffix` wildcards, IPs or CIDRs")
            continue
        if len(values) > MAX_ENTRIES:
            errors.setdefault(key, []).append(f"at most {MAX_ENTRIES} entries")
            continue
        seen: list[str] = []
        for i, value in enumerate(values):
            try:
                entry = parse_entry(value).text
            except ValueError as exc:
                errors.setdefault(f"{key}[{i}]", []).append(str(exc))
                continue
            if entry not in seen:
                seen.append(entry)
        out[key] = tuple(seen)
    if errors:
        return None, errors
    return OutboundLists(allow=out.get("allow", ()), deny=out.get("deny", ())), {}


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (IPv4-mapped, NAT64 64:ff9b::/96, 6to4, Teredo client)."""
    if address.version != 6:
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def special_kind(address: Address) -> str | None:
    """Why an address is not an ordinary public one ("loopback", "private" …), or None when it is public."""
    inner = embedded_ipv4(address)
    if inner is not None:
        kind = special_kind(inner)
        if address.ipv4_mapped is not None or address in _NAT64:
            return f"{kind} (IPv4 {inner} inside IPv6)" if kind else None
        # 6to4 and Teredo relay through the IPv4 address they carry
        return f"{kind} (IPv4 {inner} inside IPv6)" if kind else special_kind_plain(address)
    if address.version == 6 and address in _NAT64_LOCAL:
        return "private (local-use NAT64)"
    return special_kind_plain(address)


def special_kind_plain(address: Address) -> str | None:
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private"
    if address.is_reserved:
        return "reserved"
    if not address.is_global:
        return "not globally routable"
    return None


def _forms(address: Address) -> list[Address]:
    inner = embedded_ipv4(address)
    return [address] if inner is None else [address, inner]


def first_match(entries: Iterable[Entry], host: str | None, address: Address) -> Entry | None:
    forms = _forms(address)
    for entry in entries:
        if entry.matches(host, forms):
            return entry
    return None


def normal_host(host: str) -> str | None:
    """The name form of a URL's host for matching, or None when the host is an IP literal."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(bare)
        return None
    except ValueError:
        pass
    try:
        return _host_name(bare)
    except ValueError:
        return bare.strip().rstrip(".").lower()


def refusal(
    host: str, address: Address, server_allow: Iterable[Entry], allow: Iterable[Entry], deny: Iterable[Entry]
) -> str | None:
    """Why a connection to `address` (which `host` resolved to) is refused, or None when it may go ahead."""
    name = normal_host(host)
    shown = host if name is None else f"{host} ({address})"
    denied = first_match(deny, name, address)
    if denied is not None:
        return f"{shown} is on this workspace's outbound deny list (entry {denied.text!r})"
    server_allow, allow = tuple(server_allow), tuple(allow)
    by_server = first_match(server_allow, name, address)
    kind = special_kind(address)
    if kind is not None and by_server is None:
        return (
            f"{shown} is a {kind} address; private, loopback, link-local, multicast and other "
            f"non-public addresses are refused unless the server's COACH_OUTBOUND_ALLOW names them"
        )
    if allow and first_match(allow, name, address) is None:
        return f"{shown} is not on this workspace's outbound allow list"
    return None
