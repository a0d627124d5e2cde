"""A byte source for tests that pin exact outcomes: it hands out scripted bytes in order."""

from __future__ import annotations

from deniable._randomness import GeneratorSource


class Scripted(GeneratorSource):
    """A simulation source that returns the scripted bytes in order and fails when they run out."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def random_bytes(self, n: int) -> bytes:
        assert n <= len(self.data), f"asked for {n} bytes, {len(self.data)} scripted"
        out, self.data = self.data[:n], self.data[n:]
        return out
