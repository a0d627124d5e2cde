"""What the routes share: the storage, the tokens, the rate limiter, the results' shuffled guarantee."""

from __future__ import annotations

from dataclasses import dataclass, field

from deniable.server._round_window import RoundCache
from deniable.server._security import Network, RateLimiter
from deniable.server._shuffled import Ahead
from deniable.server._storage import Storage

__all__ = ["Service"]


@dataclass
class Service:
    """One running service's state (:func:`deniable.server._app.create_app` makes it).

    ``relay_token`` may post batches only (:mod:`deniable.server._security`);
    ``trusted_proxies`` name the client of a forwarded request;
    ``shuffled`` states the results' shuffled guarantee, never computed while
    a read waits once stated; ``rounds`` keeps closed rounds' results.
    """

    store: Storage
    admin_token: str | None = None
    relay_token: str | None = None
    trusted_proxies: tuple[Network, ...] = ()
    limiter: RateLimiter = field(default_factory=RateLimiter)
    shuffled: Ahead = field(default_factory=Ahead)
    rounds: RoundCache = field(default_factory=RoundCache)
