"""Permanent (memoized) randomness of a device, derived from one secret.

Longitudinal mechanisms randomize some things once per device and reuse them
on every report: the first round of L-GRR and L-OSUE, the sampled buckets
and memoized answers of dBitFlip, the rounding offset and memoized bits of
1BitMean, RAPPOR's cohort and permanent responses. A
:class:`PermanentClient` holds the device's
:class:`~deniable._client_state.ClientState` (a 32-byte secret, drawn from the
OS CSPRNG) and derives each memoized draw from the byte stream
``SHAKE-256(HMAC-SHA256(secret, label))``, ``label`` naming the memoized
quantity (a category, a rounding point, ...). So the same label always gives
the same draw without storing it, and draws for different labels are
independent (as far as HMAC is a PRF). Sampling from the stream is the same
exact integer sampling as from the OS (:mod:`deniable._randomness`); only the
fresh part of a report reads the OS CSPRNG.

``m.client(state=path)`` keeps the secret in a file (created once, owner-only,
refused for another configuration; :mod:`deniable._client_state`), so the
memoized draws survive restarts. Without ``state`` the secret lives as long
as the client object (or pass ``secret=``): a client re-created without it
draws new memoized randomness, and the lifetime guarantee no longer holds.
Whoever holds the secret can recompute every memoized draw.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deniable import _client_state as client_state
from deniable import _randomness as randomness
from deniable._client_state import ClientState, StateLike
from deniable._randomness import Source

__all__ = ["PermanentClient"]


class PermanentClient:
    """One device of a longitudinal mechanism: its state and the draws derived from its secret.

    ``state`` (a path or a :class:`~deniable._client_state.StateStore`) keeps
    the secret across processes; ``secret`` gives it directly; with neither,
    a fresh one is drawn from the OS CSPRNG. ``fields`` draws the values a
    new state keeps besides its secret (RAPPOR's cohort) from the state's own
    stream; they are read back from :attr:`fields`.
    """

    def __init__(
        self, mechanism: Any, state: StateLike | None = None, *, secret: bytes | None = None,
        fields: Callable[[Source], dict[str, Any]] | None = None,
    ) -> None:
        name = mechanism.name
        if state is not None:
            if secret is not None:
                raise TypeError(f"pass either state or secret to {name}.client, not both")
            kept = client_state.load_or_create(
                state, mechanism.wire_id, mechanism.fingerprint, fields or (lambda source: {})
            )
        else:
            if secret is None:
                secret = randomness.SECURE.random_bytes(client_state.SECRET_BYTES)
            if not isinstance(secret, bytes) or len(secret) < 16:
                raise ValueError(f"secret for {name}.client must be at least 16 bytes; got {type(secret).__name__}")
            kept = ClientState(mechanism.wire_id, mechanism.fingerprint, secret)
        self.mechanism = mechanism
        self._state = kept

    @property
    def secret(self) -> bytes:
        return self._state.secret

    @property
    def fields(self) -> Any:
        """The values the state keeps besides its secret (read-only)."""
        return self._state.fields

    def _stream(self, *label: str) -> Source:
        """The deterministic byte source of the memoized draw named ``label`` (one part or several)."""
        return self._state.source(*label)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.mechanism!r})"
