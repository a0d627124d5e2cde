"""Per-client rate limits of open surveys: who is the client, and may it post now.

The client is the address of the socket peer. Behind a reverse proxy every
peer is the proxy, so the server can be told which proxies it trusts
(``trusted_proxies``, addresses or networks): when the peer is one of them,
the client is the right-most address of ``X-Forwarded-For`` that is not a
trusted proxy (each proxy appends the peer it saw, so entries left of the
last untrusted one are whatever the client chose to send). Without trusted
proxies the header is ignored: anyone can write it.

IPv6 clients are counted by their /64 network, since one host commonly holds
a whole /64 and could otherwise take a fresh address for every request.

The limit is a token bucket per (survey, client): ``responses`` tokens at
most, refilled at ``responses / seconds`` per second. Each request takes a
token before it is stored, and gets it back if it stored nothing (refused as
invalid, or the retry of a stored response), so the limit counts the
responses stored from the address, also under concurrent requests.

The buckets live in this process's memory, deliberately: a refused request
costs no database access (a flood of refusals does not queue on SQLite's
single writer), and a restart forgets them. With several server processes
behind one address each keeps its own buckets, so a client whose requests
are spread over ``W`` workers can get up to ``W`` times the limit; run one
worker, or route each client to the same worker, where the limit must hold
exactly. At most :data:`MAX_BUCKETS` buckets are kept; the least recently
used is forgotten first.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

from deniable.server.policy import RateLimit

__all__ = ["RateLimiter", "client_address", "parse_networks", "retry_after", "MAX_BUCKETS"]

MAX_BUCKETS = 200_000
"""Buckets kept in memory (about 200 bytes each)."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """Addresses or networks (``10.0.0.1``, ``10.0.0.0/8``, ``::1``) as networks.

    Raises ValueError naming the value that is neither.
    """
    out = []
    for value in values:
        try:
            out.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"trusted proxy {value!r} is not an IP address or network (e.g. 10.0.0.1 or 10.0.0.0/8)"
            ) from None
    return tuple(out)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _trusted(text: str, networks: Sequence[Network]) -> bool:
    ip = _ip(text)
    return ip is not None and any(ip in n for n in networks)


def _key(text: str) -> str:
    """The bucket of an address: itself (IPv4) or its /64 network (IPv6); other text as is."""
    ip = _ip(text)
    if ip is None:
        return text[:100]
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def client_address(
    peer: str | None, forwarded_for: Sequence[str], trusted_proxies: Sequence[Network]
) -> str:
    """The client's bucket key (see the module docstring).

    ``peer`` is the socket peer's address, ``forwarded_for`` the values of
    every ``X-Forwarded-For`` header of the request, in order.
    """
    host = peer or "unknown"
    if not trusted_proxies or not _trusted(host, trusted_proxies):
        return _key(host)
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, trusted_proxies):
            return _key(hop)
    return _key(hops[0] if hops else host)


class RateLimiter:
    """Token buckets by key, in memory (thread-safe).

    ``take(key, limit)`` returns 0 if a token was taken, or else the seconds
    until one is available.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, max_buckets: int = MAX_BUCKETS) -> None:
        self._clock = clock
        self._max = max_buckets
        self._buckets: OrderedDict[tuple[str, str], tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, scope: str, key: str, limit: RateLimit) -> float:
        """Take one token of ``key``'s bucket within ``scope`` (a survey id); 0 or the wait in seconds."""
        now = self._clock()
        name = (scope, key)
        with self._lock:
            tokens, then = self._buckets.pop(name, (float(limit.responses), now))
            tokens = min(float(limit.responses), tokens + (now - then) * limit.per_second)
            if tokens >= 1.0:
                tokens -= 1.0
                wait = 0.0
            else:
                wait = (1.0 - tokens) / limit.per_second
            self._buckets[name] = (tokens, now)
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
        return wait

    def give_back(self, scope: str, key: str, limit: RateLimit) -> None:
        """Return the token of an attempt that stored nothing (refused, or a retry of a stored response)."""
        name = (scope, key)
        with self._lock:
            if name in self._buckets:
                tokens, then = self._buckets[name]
                self._buckets[name] = (min(float(limit.responses), tokens + 1.0), then)

    def __len__(self) -> int:
        return len(self._buckets)


def retry_after(wait: float) -> str:
    """``Retry-After`` in whole seconds (rounded up, at least 1)."""
    return str(max(1, math.ceil(wait)))
