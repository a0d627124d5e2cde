"""Items: the fixed-length byte strings that heavy-hitter discovery works on.

**Text** (``kind="text"``). A value is a ``str`` (or UTF-8 ``bytes``). Its
item is ``max_length + 1`` bytes: the UTF-8 bytes, then the end marker
``0xFF``, padded with ``0xFF``. A string longer than ``max_length`` bytes is
cut after its last whole character that fits and marked ``0xFE`` instead: it
is found as that prefix with ``truncated=True``, never merged with the
shorter string itself. ``0xFE`` and ``0xFF`` never occur in UTF-8, so items
of distinct strings (up to the cut) are distinct. The ``+ 1`` byte is what
tells a string of exactly ``max_length`` bytes (``0xFF`` there) from a
longer one cut to it (``0xFE``); it costs PEM one level (each level holds
``n / (max_length + 1)`` devices instead of ``n / max_length``).

**Integers** (``kind="integer"``). A value is an integer in
``-2**63 .. 2**63 - 1`` (Python or numpy, not bool). Its item is the 8
bytes big-endian of ``value + 2**63``: distinct integers have distinct
items, and no integer is cut.

**Extensions** (:meth:`Items.extensions`, what PEM and SFP try after a
prefix). Integers: any byte. Text: the bytes that can follow the prefix in
the item of some string, by UTF-8's grammar: after a marker only padding
(``0xFF``); inside a character its continuation bytes (``0x80..0xBF``,
narrower after ``0xE0``, ``0xED``, ``0xF0``, ``0xF4``); after a whole
character an ASCII byte, a lead byte whose character still fits in
``max_length`` (``0xC2..0xDF`` two bytes, ``0xE0..0xEF`` three,
``0xF0..0xF4`` four), the end marker, and the cut marker where a
character can fail to fit (fewer than 4 bytes of room). So a prefix of
whole characters has at most 180 extensions, not 256; the bytes no item
holds there (``0xC0``, ``0xC1``, ``0xF5..0xFD``, stray continuation bytes)
are never tested.

**Alphabet** (text only, optional). A string of distinct single-byte ASCII
characters (code points 0..127; a multi-byte UTF-8 character is refused).
Every value must then consist of alphabet characters, and a prefix is
extended only by the alphabet's bytes and the end marker (at the last
position, the two markers): ``|alphabet| + 1`` options instead of 256. The
items themselves are unchanged; a value longer than ``max_length`` is still
cut there and marked ``0xFE``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.mechanisms._sketch import text_bytes

__all__ = ["END", "CUT", "KINDS", "Items", "check_alphabet"]

END, CUT = 0xFF, 0xFE
KINDS = ("text", "integer")
_OFFSET = 1 << 63
_INT_BYTES = 8
_ASCII = tuple(range(0x80))
_LEADS = (tuple(range(0xC2, 0xE0)), tuple(range(0xE0, 0xF0)), tuple(range(0xF0, 0xF5)))  # 2, 3, 4 bytes
# the continuation bytes allowed right after a lead byte (UTF-8: no overlong forms, surrogates, or > U+10FFFF)
_SECOND = {0xE0: range(0xA0, 0xC0), 0xED: range(0x80, 0xA0), 0xF0: range(0x90, 0xC0), 0xF4: range(0x80, 0x90)}
_CONTINUATION = range(0x80, 0xC0)


def _utf8_next(prefix: bytes, max_length: int) -> tuple[int, ...] | range:
    """Bytes that can follow ``prefix`` (UTF-8 bytes, no marker) in a text item of ``max_length + 1`` bytes."""
    last = len(prefix) - 1
    while last >= 0 and prefix[last] & 0xC0 == 0x80:  # back to the last character's first byte
        last -= 1
    if last >= 0:
        lead = prefix[last]
        size = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        done = len(prefix) - last
        if done < size:  # inside a character: its continuation bytes
            return _SECOND.get(lead, _CONTINUATION) if done == 1 else _CONTINUATION
    room = max_length - len(prefix)
    if room == 0:
        return (END, CUT)
    leads = [b for size, group in enumerate(_LEADS, start=2) if size <= room for b in group]
    return (*_ASCII, *leads, END, *((CUT,) if room < 4 else ()))


def _cut(data: bytes, limit: int) -> bytes:
    """The longest prefix of UTF-8 ``data`` of at most ``limit`` bytes that ends on a character boundary."""
    end = limit
    while end > 0 and data[end] & 0xC0 == 0x80:  # data[end] continues the character before it
        end -= 1
    return data[:end]


def _integers(values: Any) -> tuple[list[bytes], NDArray[np.int64]]:
    """The distinct integers' items and each value's position among them (TypeError/ValueError name the value)."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"values must be a sequence of integers; got a single {type(values).__name__}")
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    for i, v in enumerate(items):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"values[{i}] must be an integer; got {type(v).__name__} {v!r:.60}")
        if not -_OFFSET <= int(v) < _OFFSET:
            raise ValueError(f"values[{i}] must be in -2**63..2**63-1; got {int(v)}")
    shifted = np.array([int(v) + _OFFSET for v in items], dtype=np.uint64)
    distinct, inverse = np.unique(shifted, return_inverse=True)
    return [int(u).to_bytes(_INT_BYTES, "big") for u in distinct.tolist()], inverse.astype(np.int64).reshape(-1)


def check_alphabet(alphabet: Any, kind: str) -> None:
    """ValueError naming ``alphabet`` unless it is None or distinct single-byte ASCII characters (text only)."""
    if alphabet is None:
        return
    if kind != "text":
        raise ValueError(f"alphabet applies to kind 'text' only; got kind {kind!r}")
    if not isinstance(alphabet, str) or not alphabet:
        raise ValueError(f"alphabet must be a non-empty string of distinct ASCII characters; got {alphabet!r:.60}")
    wide = next((c for c in alphabet if ord(c) > 127), None)
    if wide is not None:
        raise ValueError(f"alphabet must hold single-byte ASCII characters (code points 0..127); got {wide!r}")
    twice = next((c for i, c in enumerate(alphabet) if c in alphabet[:i]), None)
    if twice is not None:
        raise ValueError(f"alphabet must hold distinct characters; {twice!r} occurs more than once")


class Items:
    """Encode values of one ``kind`` as items of ``length`` bytes, and decode them back."""

    def __init__(self, kind: str, max_length: int, alphabet: str | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {list(KINDS)}; got {kind!r}")
        if isinstance(max_length, bool) or not isinstance(max_length, int) or not 1 <= max_length <= 254:
            raise ValueError(f"max_length must be an integer in 1..254 (bytes); got {max_length!r}")
        check_alphabet(alphabet, kind)
        self.kind, self.max_length, self.alphabet = kind, max_length, alphabet
        self.length = max_length + 1 if kind == "text" else _INT_BYTES
        self._symbols: Sequence[int] = range(256) if alphabet is None else (*alphabet.encode("ascii"), END)

    @property
    def options(self) -> int:
        """The most bytes that can follow a prefix (integers 256; text at most 180, or ``|alphabet| + 1``)."""
        if self.kind == "text" and self.alphabet is None:
            return max(len(_utf8_next(b"", self.max_length)), 2)
        return len(self._symbols)

    def encode(self, values: Any) -> tuple[list[bytes], NDArray[np.int64]]:
        """The distinct values' items and each value's position among them."""
        if self.kind == "integer":
            return _integers(values)
        data, inverse = text_bytes(values)
        if self.alphabet is not None:
            self._check_symbols(data, inverse)
        ends = [bytes([END]) * (self.length - size) for size in range(self.max_length + 1)]  # marker and padding
        cut = bytes([CUT]).ljust(self.length - self.max_length, bytes([END]))
        limit = self.max_length
        items = [d + ends[len(d)] if len(d) <= limit else (_cut(d, limit) + cut).ljust(self.length, bytes([END]))
                 for d in data]
        return items, inverse

    def extensions(self, prefix: bytes) -> Sequence[int]:
        """Bytes that can follow ``prefix`` in an item: after a text marker only padding; a marker last."""
        if self.kind == "integer":
            return range(256)
        if prefix[-1:] in (bytes([END]), bytes([CUT])):
            return (END,)
        if self.alphabet is None:
            return _utf8_next(prefix, self.max_length)
        return (END, CUT) if len(prefix) == self.length - 1 else self._symbols

    def finished(self, prefix: bytes) -> bool:
        """Whether ``prefix`` fixes its whole item: it is ``length`` bytes, or text ending in a marker."""
        return len(prefix) == self.length or (self.kind == "text" and prefix[-1:] in (bytes([END]), bytes([CUT])))

    def padded(self, prefix: bytes, size: int) -> bytes:
        """The first ``size`` bytes of the item of a :meth:`finished` ``prefix`` (padding is ``0xFF``)."""
        return prefix.ljust(size, bytes([END]))[:size]

    def _check_symbols(self, data: list[bytes], inverse: NDArray[np.int64]) -> None:
        """ValueError naming the first value (by position) with a character outside the alphabet."""
        allowed = set(self.alphabet or "")
        letters = (self.alphabet or "").encode("ascii")
        if not b"".join(data).translate(None, letters):  # every byte a letter (one pass, in C)
            return
        bad = [j for j, d in enumerate(data) if not set(d.decode("utf-8")) <= allowed]  # not empty
        i = int(np.flatnonzero(np.isin(inverse, bad))[0])
        value = data[int(inverse[i])].decode("utf-8")
        char = next(c for c in value if c not in allowed)
        raise ValueError(f"values[{i}] has the character {char!r}, not in the alphabet; got {value!r:.60}")

    def decode(self, item: bytes) -> tuple[Any, bool]:
        """The value an item stands for, and whether it was cut."""
        if self.kind == "integer":
            return int.from_bytes(item, "big") - _OFFSET, False
        end = min(j for j, b in enumerate(item) if b in (END, CUT))
        return item[:end].decode("utf-8", errors="replace"), item[end] == CUT
