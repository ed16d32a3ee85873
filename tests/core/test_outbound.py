"""The outbound rules (core/outbound): which addresses are special, list entries, and how the lists combine."""

import ipaddress

import pytest

from core.outbound import (
    OutboundLists,
    embedded_ipv4,
    parse_entries,
    parse_entry,
    refusal,
    special_kind,
    validate_lists,
)

ip = ipaddress.ip_address


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("100.64.0.1", "not globally routable"),
        ("192.0.2.1", "private"),
        ("240.0.0.1", "private"),
        ("::ffff:127.0.0.1", "loopback (IPv4 127.0.0.1 inside IPv6)"),
        ("::ffff:169.254.169.254", "link-local (IPv4 169.254.169.254 inside IPv6)"),
        ("64:ff9b::a00:1", "private (IPv4 10.0.0.1 inside IPv6)"),
        ("2002:7f00:1::", "loopback (IPv4 127.0.0.1 inside IPv6)"),
        ("64:ff9b:1::1", "private (local-use NAT64)"),
        ("::7f00:1", "reserved"),  # IPv4-compatible, deprecated
    ],
)
def test_special_addresses_are_named(address, kind):
    assert special_kind(ip(address)) == kind


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "93.184.216.34", "2606:4700::1111", "64:ff9b::808:808", "::ffff:8.8.8.8", "2002:808:808::1"]
)
def test_public_addresses_are_not_special(address):
    assert special_kind(ip(address)) is None


def test_embedded_ipv4_forms():
    assert embedded_ipv4(ip("::ffff:10.1.2.3")) == ip("10.1.2.3")
    assert embedded_ipv4(ip("64:ff9b::c0a8:101")) == ip("192.168.1.1")
    assert embedded_ipv4(ip("2002:c0a8:101::")) == ip("192.168.1.1")
    assert embedded_ipv4(ip("10.0.0.1")) is None and embedded_ipv4(ip("2606:4700::1")) is None


def test_entries_are_parsed_and_normalised():
    assert parse_entry(" API.Example.COM. ").text == "api.example.com"
    assert parse_entry("*.Example.com").text == "*.example.com"
    assert parse_entry("bücher.de").text == "xn--bcher-kva.de"
    assert parse_entry("10.1.2.3/8").text == "10.0.0.0/8"
    assert parse_entry("[::1]").text == "::1" and parse_entry("*").kind == "any"
    for nonsense in ("", "  ", 5, None, "a b", "1.2.3.4/33", "*a.com", "a.*.com", "http://x.com", "x_.-y", "::g"):
        with pytest.raises(ValueError):
            parse_entry(nonsense)


def test_validate_lists_names_every_bad_field():
    lists, errors = validate_lists({"allow": ["*.ok.example", "ok.example", "ok.example"], "deny": []})
    assert errors == {} and lists == OutboundLists(allow=("*.ok.example", "ok.example"))
    lists, errors = validate_lists({"allow": ["fine.example", "not a host"], "deny": "10.0.0.0/8", "extra": 1})
    assert lists is None and set(errors) == {"allow[1]", "deny", "extra"}
    assert validate_lists({"allow": ["x.example"] * 201})[1] == {"allow": ["at most 200 entries"]}
    assert validate_lists([])[1] == {"(body)": ["must be an object with allow and deny lists"]}


def _why(host, address, server=(), allow=(), deny=()):
    return refusal(host, ip(address), parse_entries(server), parse_entries(allow), parse_entries(deny))


def test_public_hosts_are_reached_and_special_ones_only_when_the_server_allows():
    assert _why("example.com", "93.184.216.34") is None
    assert "loopback" in _why("localhost", "127.0.0.1")
    assert _why("localhost", "127.0.0.1", server=["127.0.0.1"]) is None
    assert _why("localhost", "127.0.0.1", server=["localhost"]) is None
    assert _why("db.corp", "10.1.2.3", server=["10.0.0.0/8"]) is None
    assert _why("db.corp", "10.1.2.3", server=["*.corp"]) is None
    assert "private" in _why("db.corp", "10.1.2.3", server=["*.other"])
    # the IPv4-mapped form of an allowed address is that address
    assert _why("::ffff:127.0.0.1", "::ffff:127.0.0.1", server=["127.0.0.1"]) is None


def test_a_workspace_cannot_open_what_the_server_refuses():
    why = _why("metadata", "169.254.169.254", allow=["169.254.169.254", "metadata"])
    assert "link-local" in why and "COACH_OUTBOUND_ALLOW" in why


def test_the_workspace_deny_list_wins_and_its_allow_list_is_exclusive():
    assert "deny list (entry '*.evil.example')" in _why("a.evil.example", "93.184.216.34", deny=["*.evil.example"])
    assert _why("evil.example", "93.184.216.34", deny=["*.evil.example"]) is None  # *.x is not x itself
    assert "deny list" in _why("localhost", "127.0.0.1", server=["127.0.0.1"], deny=["127.0.0.1"])
    assert "deny list" in _why("x.example", "93.184.216.34", allow=["x.example"], deny=["*"])
    assert _why("api.example", "93.184.216.34", allow=["api.example"]) is None
    assert "not on this workspace's outbound allow list" in _why(
        "other.example", "93.184.216.34", allow=["api.example"]
    )
    assert "allow list" in _why("localhost", "127.0.0.1", server=["127.0.0.1"], allow=["api.example"])
    assert _why("localhost", "127.0.0.1", server=["127.0.0.1"], allow=["api.example", "127.0.0.1"]) is None
