"""RAPPOR's device: a fixed cohort and a permanent (memoized) response per value.

:class:`RapporClient` is what ``RAPPOR.client`` returns
(:mod:`deniable.mechanisms._rappor` holds the mechanism). It reads the
mechanism's Bloom filters and its two randomizers and keeps, per device, the
secret from which every permanent response is derived
(:mod:`deniable.mechanisms._permanent`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _client_state as client_state
from deniable import _randomness as randomness
from deniable._client_state import StateLike
from deniable.mechanisms import _rappor_bloom as bloom
from deniable.mechanisms._permanent import PermanentClient

__all__ = ["RapporClient"]


class RapporClient(PermanentClient):
    r"""One RAPPOR device: a fixed cohort and a permanent (memoized) response per value.

    A :class:`~deniable.mechanisms._permanent.PermanentClient`, as every
    memoizing mechanism's device: the permanent randomized response (PRR) of
    a value is derived from ``HMAC-SHA256(secret, type NUL value)``
    (:meth:`deniable._client_state.ClientState.source`), so it is the same on
    every report without being stored; only the instantaneous response (IRR)
    is drawn fresh, from the OS CSPRNG. A kept state
    (``RAPPOR.client(state=...)``) also keeps the cohort, drawn once from the
    state's own stream; without a state the cohort is ``cohort`` or drawn from
    the OS CSPRNG. ``RAPPOR.client`` makes it.

    Parameters
    ----------
    mechanism : RAPPOR
        The mechanism configuration (filter size, hashes, cohorts, ``f``,
        ``p``, ``q``).
    state : str, os.PathLike or StateStore, optional
        Where the device keeps its secret and cohort across restarts; created
        on first use, reused afterwards.
    secret : bytes, optional
        The secret itself (at least 16 bytes), instead of ``state``; with
        neither, a fresh one for this object only.
    cohort : int, optional
        The device's cohort, in ``0 .. num_cohorts - 1``, with ``secret`` or
        alone (not with ``state``, which keeps its own); default: drawn
        uniformly from the OS CSPRNG.

    Raises
    ------
    TypeError
        ``state`` together with ``secret`` or ``cohort``.
    ValueError
        A ``cohort`` out of range or a ``secret`` shorter than 16 bytes.
    StateError
        A ``state`` written for another configuration, or whose cohort is not
        an int.

    Notes
    -----
    For a value :math:`v` with Bloom filter :math:`B` (the :math:`h` bits of
    :math:`v` in the device's cohort :math:`c`), the permanent response is
    drawn once per value from the keyed stream and kept:

    .. math::

        B'_i = \begin{cases} 1 & \text{w.p. } f/2 \\ 0 & \text{w.p. } f/2 \\
        B_i & \text{w.p. } 1 - f, \end{cases}

    and each report draws a fresh instantaneous response,
    :math:`\Pr[S_i = 1] = q` if :math:`B'_i = 1` and :math:`p` if
    :math:`B'_i = 0`. Since every report of :math:`v` randomizes the same
    :math:`B'`, all of a device's reports of one value together leak no more
    than :math:`B'` does: for two values whose filters differ in :math:`s`
    bits (:math:`s = 2h` when disjoint),

    .. math::

        \varepsilon_\infty = s \ln \frac{1 - f/2}{f/2},

    the mechanism's ``epsilon_infinity``, however many reports are sent; a
    client re-created without its secret draws a new :math:`B'` and loses
    that bound.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import RAPPOR
    >>> m = RAPPOR(["a", "b", "c", "d"], epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=8)
    >>> rng = np.random.default_rng(0)
    >>> device = m.client(secret=rng.bytes(32), cohort=3)
    >>> format(device.permanent("a"), "016b")
    '1111101000110110'
    >>> device.permanent("a") == device.permanent("a")
    True
    >>> report = device.privatize("a")
    >>> int(report["cohort"])
    3
    """

    def __init__(
        self,
        mechanism: Any,
        state: StateLike | None = None,
        *,
        secret: bytes | None = None,
        cohort: int | None = None,
    ) -> None:
        if state is not None:
            if secret is not None or cohort is not None:
                raise TypeError("pass either state or secret/cohort to RAPPOR.client, not both")
            super().__init__(
                mechanism,
                state,
                fields=lambda source: {"cohort": randomness.scalar_below(mechanism.num_cohorts, source)},
            )
            cohort = self.fields.get("cohort")
            if type(cohort) is not int:
                raise client_state.StateError(f"client state for RAPPOR: field 'cohort' must be an int; got {cohort!r}")
        else:
            super().__init__(mechanism, secret=secret)
            if cohort is None:
                cohort = randomness.scalar_below(mechanism.num_cohorts, randomness.SECURE)
        if isinstance(cohort, bool) or not isinstance(cohort, int) or not 0 <= cohort < mechanism.num_cohorts:
            raise ValueError(f"cohort must be an int in 0..{mechanism.num_cohorts - 1}; got {cohort!r}")
        self.cohort = cohort

    def permanent(self, value: Any) -> int:
        """The memoized permanent response (PRR) of ``value``: the Bloom bits the IRR randomizes."""
        prr = self._permanent(self.mechanism.domain_obj.encode_one(value))[0] & self.mechanism._keep
        return bloom._as_int(prr)

    def _permanent(self, position: int) -> NDArray[np.uint64]:
        """``(1, words)``: the PRR of the category at ``position``."""
        m = self.mechanism
        value = m.domain[position]
        stream = self._stream(type(value).__name__, str(value))
        filters = m._bloom3[self.cohort, position : position + 1]
        prr: NDArray[np.uint64] = m._prr(filters, stream)
        return prr

    def privatize(self, value: Any) -> Any:
        """One report: the memoized PRR of ``value`` through a fresh IRR."""
        m = self.mechanism
        position = m.domain_obj.encode_one(value)
        bits = m._irr(self._permanent(position), randomness.SECURE)
        return m._reports(np.array([self.cohort], dtype=np.uint64), bits)[0]

    def __repr__(self) -> str:
        return f"RapporClient({self.mechanism!r}, cohort={self.cohort})"
