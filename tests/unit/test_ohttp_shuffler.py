"""The relay's shuffler: uniform order, never a batch under the threshold, a random delay, a durable buffer."""

from __future__ import annotations

import asyncio
import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from deniable.testing import chi_square_gof

pytest.importorskip("starlette", reason="the relay needs the 'server' extra")

from deniable._ohttp._shuffler import (  # noqa: E402
    MAX_BATCH,
    Buffer,
    Shuffler,
    decode_batch,
    encode_batch,
    shuffled,
)

ALPHA = 1e-7
"""Each chi-square check fails a correct shuffle with probability ALPHA (< 1e-6 of runs)."""


def _permutation_counts(orders: list[list[bytes]], items: list[bytes]) -> np.ndarray:
    index = {p: i for i, p in enumerate(itertools.permutations(items))}
    counts = np.zeros(len(index), dtype=np.int64)
    for order in orders:
        counts[index[tuple(order)]] += 1
    return counts


def _naive(items: list[bytes], rng: random.Random) -> list[bytes]:
    """A wrong shuffle (swap each place with any place): not uniform for n >= 3."""
    out = list(items)
    for i in range(len(out)):
        j = rng.randrange(len(out))
        out[i], out[j] = out[j], out[i]
    return out


@pytest.mark.parametrize("seeded", [True, False])
def test_output_order_is_uniform_whatever_the_arrival_order(seeded: bool) -> None:
    """Every one of the 24 orders of 4 reports is equally likely: chi-square at alpha = 1e-7 over 24,000 shuffles.

    Seeded (``random.Random``) the outcome is fixed; with the OS CSPRNG (the
    default) a correct shuffle fails with probability 1e-7. Power: the naive
    swap-with-any shuffle (orders of probability 8/256 to 15/256 against 1/24)
    fails the same check, seeded, its statistic (about 660) over 5 times the critical value (76.9).
    """
    items = [b"first", b"second", b"third", b"fourth"]
    rng = random.Random(20261127) if seeded else None  # noqa: S311 - seeded on purpose: a fixed outcome
    orders = [shuffled(items, rng) for _ in range(24_000)]
    check = chi_square_gof(_permutation_counts(orders, items), np.full(24, 1 / 24), ALPHA)
    assert check.passed, check.message
    wrong = random.Random(7)  # noqa: S311 - the wrong shuffle of the power check
    biased = [_naive(items, wrong) for _ in range(24_000)]
    power = chi_square_gof(_permutation_counts(biased, items), np.full(24, 1 / 24), ALPHA)
    assert not power.passed and power.statistic > 5 * power.critical_value


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_never_a_batch_under_the_threshold_and_only_after_the_delay(tmp_path: Path) -> None:
    clock = Clock()
    shuffler = Shuffler(Buffer(tmp_path / "buffer.sqlite"), threshold=5, max_delay=10.0, clock=clock,
                        rng=random.Random(3))  # noqa: S311 - seeded: a fixed delay
    sent: list[list[bytes]] = []

    async def forward(items: list[bytes]) -> bool:
        sent.append(items)
        return True

    async def run() -> None:
        for i in range(4):
            await shuffler.put(b"r%d" % i)
            clock.now += 100
            assert await shuffler.release_due(forward) == 0  # under the threshold: held however long
        await shuffler.put(b"r4")
        assert await shuffler.release_due(forward) == 0  # due after a random delay from now
        delay = shuffler._due - clock.now  # type: ignore[operator]
        assert 0 <= delay <= 10
        await shuffler.put(b"r5")  # joins the batch during the delay
        clock.now += delay
        assert await shuffler.release_due(forward) == 6
        assert shuffler.buffer.count() == 0 and shuffler.released == [6]

    asyncio.run(run())
    assert sorted(sent[0]) == [b"r%d" % i for i in range(6)]


def test_a_refused_batch_stays_in_the_buffer(tmp_path: Path) -> None:
    shuffler = Shuffler(Buffer(tmp_path / "buffer.sqlite"), threshold=2, max_delay=0.0)

    async def refuse(items: list[bytes]) -> bool:
        return False

    async def run() -> None:
        await shuffler.put(b"a")
        await shuffler.put(b"b")
        assert await shuffler.release_due(refuse) == 0
        assert shuffler.buffer.count() == 2 and shuffler.released == []

    asyncio.run(run())


def test_the_buffer_survives_reopening(tmp_path: Path) -> None:
    buffer = Buffer(tmp_path / "buffer.sqlite")
    for i in range(3):
        buffer.put(bytes([i]) * 10)
    buffer.close()
    again = Buffer(tmp_path / "buffer.sqlite")
    kept = again.take()
    assert [b for _, b in kept] == [bytes([i]) * 10 for i in range(3)]
    again.remove([kept[0][0]])
    assert again.count() == 2


def test_batch_framing_and_settings() -> None:
    items = [b"", b"x", bytes(300)]
    assert decode_batch(encode_batch(items)) == items
    with pytest.raises(ValueError, match="inside a length"):
        decode_batch(b"\x00\x00")
    with pytest.raises(ValueError, match="longer than"):
        decode_batch(b"\x00\x00\x00\x05ab")
    with pytest.raises(ValueError, match="threshold"):
        Shuffler(Buffer(":memory:"), threshold=0)
    with pytest.raises(ValueError, match="threshold"):
        Shuffler(Buffer(":memory:"), threshold=MAX_BATCH + 1)
