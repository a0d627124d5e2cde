"""Randomness: exact integer sampling from a secure or a seeded source.

Every device-side call takes ``rng``:

* ``rng=None`` (the default) reads the operating system's CSPRNG
  (``os.urandom`` for batches, :mod:`secrets` for single reports). Nothing is
  buffered or kept between calls, so a ``fork()`` shares no random state.
* ``rng=<int>``, a :class:`numpy.random.SeedSequence` or a
  :class:`numpy.random.Generator` selects the fast, reproducible simulation
  path. Its output is **not private**: a seeded generator is predictable.

Sampling is exact. A probability is always a ratio of integers ``a / D`` and
is realised by drawing an integer uniformly below ``D`` (by rejection, never
by scaling a float) and comparing it with ``a``. Bernoulli bits with a dyadic
probability ``c / 2**w`` are produced 64 at a time by a bit-sliced comparison
of uniform bits with the binary expansion of ``c`` (most significant bit
first), so each bit costs a handful of random bits, not a float.
"""

from __future__ import annotations

import os
import secrets
from typing import Any, Protocol, TypeAlias

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "RNGLike",
    "Source",
    "SecureSource",
    "GeneratorSource",
    "resolve",
    "uniform_below",
    "bernoulli_words",
    "bernoulli",
]

RNGLike: TypeAlias = "None | int | np.random.SeedSequence | np.random.Generator | Source"

_U32 = 1 << 32
_U64 = 1 << 64


class Source(Protocol):
    """A supply of uniformly random bytes."""

    secure: bool

    def random_bytes(self, n: int) -> bytes: ...


class SecureSource:
    """The operating system's CSPRNG; stateless, so safe across ``fork()``."""

    secure = True

    def random_bytes(self, n: int) -> bytes:
        return os.urandom(n)

    def __repr__(self) -> str:
        return "SecureSource()"


class GeneratorSource:
    """A seeded numpy generator: fast and reproducible, for simulation only."""

    secure = False

    def __init__(self, generator: np.random.Generator) -> None:
        self.generator = generator

    def random_bytes(self, n: int) -> bytes:
        return self.generator.bytes(n)

    def __repr__(self) -> str:
        return f"GeneratorSource({self.generator!r})"


SECURE = SecureSource()


def resolve(rng: object) -> Source:
    """Turn an ``rng`` argument (SPEC 7 semantics) into a byte source.

    ``None`` means the OS CSPRNG. Seeds and generators mean simulation.
    """
    if rng is None:
        return SECURE
    if isinstance(rng, (SecureSource, GeneratorSource)):
        return rng
    if isinstance(rng, np.random.Generator):
        return GeneratorSource(rng)
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"rng must be None, an int seed or a numpy Generator; got {rng!r}")
    if isinstance(rng, (int, np.integer, np.random.SeedSequence)):
        return GeneratorSource(np.random.default_rng(rng))
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            "rng must be None, an int seed or a numpy Generator; the legacy RandomState "
            "is not accepted (use np.random.default_rng)"
        )
    raise TypeError(f"rng must be None, an int seed or a numpy Generator; got {rng!r}")


def _words(source: Source, count: int, dtype: type[np.unsignedinteger[Any]]) -> NDArray[Any]:
    size = np.dtype(dtype).itemsize
    return np.frombuffer(source.random_bytes(count * size), dtype=dtype).copy()


def uniform_below(bound: int, size: int, source: Source) -> NDArray[np.uint64]:
    """``size`` integers drawn exactly uniformly from ``[0, bound)``.

    Uses 32-bit words when ``bound <= 2**32`` and 64-bit words otherwise;
    words at or above the largest multiple of ``bound`` are rejected and drawn
    again, so every value has probability exactly ``1 / bound``.
    """
    if not 1 <= bound <= _U64:
        raise ValueError(f"bound must be in [1, 2**64]; got {bound}")
    if bound == 1:
        return np.zeros(size, dtype=np.uint64)
    wide = bound > _U32
    span = _U64 if wide else _U32
    dtype = np.uint64 if wide else np.uint32
    limit = (span // bound) * bound
    out = _words(source, size, dtype)
    if limit < span:
        bad = np.flatnonzero(out >= limit)
        while bad.size:
            fresh = _words(source, bad.size, dtype)
            out[bad] = fresh
            bad = bad[fresh >= limit]
    if bound & (bound - 1) == 0:
        out &= dtype(bound - 1)
    else:
        out %= dtype(bound)
    return out.astype(np.uint64, copy=False)


def scalar_below(bound: int, source: Source) -> int:
    """One integer uniform in ``[0, bound)``; :mod:`secrets` on the secure path."""
    if source is SECURE:
        return secrets.randbelow(bound)
    return int(uniform_below(bound, 1, source)[0])


def _settle(
    expansion: list[int], start: int, steps: int, result: NDArray[Any], mask: NDArray[Any], source: Source
) -> None:
    """Advance the bit-sliced comparison ``U < c`` by ``steps`` bits, in place.

    ``mask`` marks the lanes still undecided (their random prefix equals the
    numerator's). At bit ``j`` a lane whose random bit is 0 where ``c_j = 1``
    is settled to 1 (``U < c``); one whose bit is 1 where ``c_j = 0`` is
    settled to 0; equal bits leave it undecided.
    """
    random = np.frombuffer(source.random_bytes(steps * mask.nbytes), dtype=mask.dtype)
    random = random.reshape(steps, mask.size)
    for s in range(steps):
        u = random[s]
        if expansion[start + s]:
            result |= mask & ~u
            mask &= u
        else:
            mask &= ~u


def bernoulli_words(numerator: int, bits: int, count: int, source: Source) -> NDArray[np.uint64]:
    """``count`` 64-bit words whose bits are i.i.d. Bernoulli(``numerator / 2**bits``).

    Each bit is the outcome of ``U < numerator`` for an independent uniform
    ``bits``-bit integer ``U``, decided most significant bit first, 64 lanes
    per word operation. Every random bit settles half of the lanes it is
    spent on, so after 4 bits per lane over whole words only 1/16 of the
    lanes are open; those are finished byte by byte (8 lanes at a time, only
    the bytes with open lanes draw more bits), about 6 random bits per lane
    in all.
    """
    if not 0 <= numerator <= (1 << bits):
        raise ValueError(f"numerator must be in [0, 2**bits]; got {numerator}/{1 << bits}")
    if numerator == 1 << bits:
        return np.full(count, np.uint64(_U64 - 1), dtype=np.uint64)
    result = np.zeros(count, dtype=np.uint64)
    if numerator == 0 or count == 0:
        return result
    expansion = [(numerator >> (bits - 1 - j)) & 1 for j in range(bits)]
    last = max(j for j, b in enumerate(expansion) if b) + 1  # later bits can only give 0
    first = min(4, last)
    mask = np.full(count, np.uint64(_U64 - 1), dtype=np.uint64)
    _settle(expansion, 0, first, result, mask, source)
    lanes, open_lanes = result.view(np.uint8), mask.view(np.uint8)
    at = np.flatnonzero(open_lanes)
    open_part = open_lanes[at]
    step = first
    while step < last and at.size:
        steps = min(4, last - step)
        part = lanes[at]
        _settle(expansion, step, steps, part, open_part, source)
        lanes[at] = part
        keep = open_part != 0
        at, open_part = at[keep], open_part[keep]
        step += steps
    return result


def bernoulli(numerator: int, denominator: int, size: int, source: Source) -> NDArray[np.bool_]:
    """``size`` independent booleans, each True with probability exactly ``numerator/denominator``."""
    if not 0 <= numerator <= denominator:
        raise ValueError(f"probability {numerator}/{denominator} is not in [0, 1]")
    return uniform_below(denominator, size, source) < np.uint64(numerator)
