"""One codec per report kind: the JSON shape of a report, read and written.

A mechanism's ``report_to_json`` / ``reports_from_json`` use the codec of its
report kind; the codec checks the *shape* of the JSON (a hex string of the
right length, an object with the right fields, integers where integers go)
and the mechanism then checks the values (a category of its domain, a
bucket below ``g``). The kinds:

=============  ==========================================  =====================
kind           a report in JSON                            mechanisms
=============  ==========================================  =====================
``bool``       ``true`` / ``false``                        BinaryRR, yes/no designs
``category``   the category value                          GRR
``int``        an integer                                  Hadamard response, designs with several answers
``float``      a number                                    numeric mechanisms, OneBitMean
``bits``       hex of the packed bits (first bit = MSB)    SUE, OUE
``seed-value`` ``{"seed": s, "value": v}``                 BLH, OLH
``subset``     the ``omega`` sorted category positions     subset selection
``rappor``     ``{"cohort": c, "bits": b}`` (bit i = Bloom bit i)  RAPPOR
``cms``        ``{"row": j, "bits": hex}`` (bit b = bit b % 8 of byte b // 8)  CMS
``hcms``       ``{"row": j, "index": l, "bit": 0 or 1}``   HCMS
``dbitflip``   ``{"buckets": [d ints], "bits": [d 0/1]}``  dBitFlip
``two-group``  ``{"group": 1 or 2, "answer": a}``          two-group designs (read by the design)
=============  ==========================================  =====================

Wire version 2 differs in the *wide* fields only, the integers that may
exceed 2**53 (an OLH/BLH ``seed``, RAPPOR's ``bits``): they travel as
decimal strings, so that a browser reads them exactly with ``JSON.parse``
(:func:`to_version`, :func:`from_version`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.errors import ReportError

__all__ = [
    "KINDS", "WIRE_VERSIONS", "MAX_SAFE_INTEGER", "to_version", "from_version", "hex_to_json", "hex_from_json",
    "hex_matrix", "hex_field", "seed_value_to_json", "check_seed_value", "subset_to_json", "subset_from_json",
    "rappor_to_json", "rappor_from_json", "fields_to_json", "check_fields", "dbitflip_to_json",
    "dbitflip_from_json", "check_numbers", "decimal",
]

KINDS = (
    "bool", "category", "int", "float", "bits", "seed-value", "subset", "rappor", "cms", "hcms", "dbitflip",
    "two-group",
)
"""Every report kind (the name of its schema is ``report.<kind>``)."""
WIRE_VERSIONS = (1, 2)
"""The wire versions a reader takes (version 1: plain JSON integers; version 2: wide integers as strings)."""
MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer JavaScript's ``JSON.parse`` reads exactly (``Number.MAX_SAFE_INTEGER``)."""

_DECIMAL = re.compile(r"(0|[1-9][0-9]*)\Z")


# ------------------------------------------------------------ wire versions
def to_version(items: list[Any], wide: Sequence[str], version: int) -> list[Any]:
    """Version-1 JSON reports in wire ``version``: in version 2 the ``wide`` fields as decimal strings."""
    if version == 1 or not wide:
        return items
    _check_version(version)
    return [{k: (str(v) if k in wide else v) for k, v in item.items()} for item in items]


def from_version(items: list[Any], wide: Sequence[str], version: int, owner: str) -> list[Any]:
    """Reports of wire ``version`` as version-1 JSON: the ``wide`` fields of version 2 read as integers.

    A wide field of version 2 must be a decimal string (no sign, no leading
    zero); :class:`~deniable.errors.ReportError` naming the report otherwise.
    """
    if version == 1 or not wide:
        return items
    _check_version(version)
    out = []
    for i, item in enumerate(items):
        if isinstance(item, dict):
            item = dict(item)
            for key in wide:
                value = item.get(key)
                if not isinstance(value, str) or not _DECIMAL.match(value):
                    reason = f"{key} must be a decimal string in wire version 2; got {value!r:.60}"
                    raise ReportError(f"{owner} report {i}: {reason}", i, reason)
                item[key] = int(value)
        out.append(item)
    return out


def _check_version(version: int) -> None:
    if isinstance(version, bool) or version not in WIRE_VERSIONS:
        raise ValueError(f"wire_version must be one of {list(WIRE_VERSIONS)}; got {version!r}")


def decimal(value: Any) -> int | None:
    """A version-2 wide integer (a decimal string above ``MAX_SAFE_INTEGER``) as an int; None otherwise."""
    if isinstance(value, str) and len(value) <= 20 and _DECIMAL.match(value.removeprefix("-")):
        n = int(value)
        if abs(n) > MAX_SAFE_INTEGER:
            return n
    return None


# ------------------------------------------------------------------ bits
def hex_to_json(report: Any) -> str:
    """Packed bytes as lower-case hex."""
    return bytes(np.asarray(report, dtype=np.uint8)).hex()


_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def hex_ascii(packed: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """An ``(n, size)`` array of packed bytes as the ``(n, 2 * size)`` ASCII bytes of each row's lower-case
    hex, made at once (each byte's two digits looked up)."""
    digits = np.empty((packed.shape[0], 2 * packed.shape[1]), dtype=np.uint8)
    digits[:, 0::2] = _HEX_DIGITS[packed >> np.uint8(4)]
    digits[:, 1::2] = _HEX_DIGITS[packed & np.uint8(15)]
    return digits


def hex_text(packed: NDArray[np.uint8]) -> NDArray[np.str_]:
    """An ``(n, size)`` array of packed bytes as numpy text, each row's lower-case hex (what
    :func:`hex_to_json` gives for one report), made at once from :func:`hex_ascii`."""
    n, size = packed.shape
    points = hex_ascii(packed).astype(np.uint32)
    return points.view(f"<U{2 * size}").reshape(n) if n else np.zeros(0, dtype=str)


def hex_from_json(items: Sequence[Any], size: int, owner: str, bits: int) -> NDArray[np.uint8]:
    """Hex strings of ``size`` bytes each as an ``(n, size)`` array (``bits``: what they hold, for messages)."""
    out = np.zeros((len(items), size), dtype=np.uint8)
    for i, item in enumerate(items):
        if not isinstance(item, str) or len(item) != 2 * size:
            raise ValueError(
                f"{owner} report {i} must be a hex string of {2 * size} characters ({bits} bits); got {item!r:.60}"
            )
        try:
            out[i] = np.frombuffer(bytes.fromhex(item), dtype=np.uint8)
        except ValueError:
            raise ValueError(f"{owner} report {i} is not valid hex: {item!r:.60}") from None
    return out


_NIBBLES = np.full(128, 255, dtype=np.uint8)  # an ASCII code point's hex digit value; 255: not a hex digit
for _i, _c in enumerate("0123456789abcdef"):
    _NIBBLES[ord(_c)] = _NIBBLES[ord(_c.upper())] = _i


def hex_matrix(values: NDArray[np.str_], size: int) -> NDArray[np.uint8] | None:
    """Numpy hex text of ``size`` bytes per cell as an ``(n, size)`` array, decoded at once (each cell's
    code points looked up as digits, paired into bytes); None if any cell is not exactly ``2 * size`` hex
    digits (:func:`hex_from_json` then names the first such cell)."""
    values = np.asarray(values)
    if values.dtype.kind != "U" or (values.size and values.dtype.itemsize != 4 * 2 * size) or values.ndim != 1:
        return None if values.size else np.zeros((0, size), dtype=np.uint8)
    points = values.view(np.uint32).reshape(values.size, 2 * size)  # a shorter cell ends in code point 0
    if points.max(initial=0) >= 128:
        return None
    digits = _NIBBLES[points]
    if (digits == 255).any():
        return None
    packed = (digits[:, 0::2] << np.uint8(4)) | digits[:, 1::2]
    return packed.astype(np.uint8, copy=False)


def hex_field(value: Any, size: int) -> NDArray[np.uint8] | None:
    """A report field of ``size`` bytes, given as their hex (or already as bytes); None if it is neither."""
    if isinstance(value, str):
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = b""
        if len(raw) == size and len(value) == 2 * size:
            return np.frombuffer(raw, dtype=np.uint8)
    elif isinstance(value, np.ndarray) and value.shape == (size,) and value.dtype == np.uint8:
        return value
    return None


# ------------------------------------------------------------ structured
def seed_value_to_json(report: Any) -> dict[str, int]:
    """A local-hashing report: ``{"seed": s, "value": v}``."""
    return {"seed": int(report["seed"]), "value": int(report["value"])}


def check_seed_value(items: Sequence[Any], owner: str) -> None:
    """A local-hashing report is exactly ``{"seed": int, "value": int}`` (the mechanism checks the values)."""
    for i, item in enumerate(items):
        if not isinstance(item, dict) or item.keys() != {"seed", "value"}:
            raise ValueError(f"{owner} report {i} must be {{'seed': int, 'value': int}}; got {item!r:.60}")


def subset_to_json(report: Any) -> list[int]:
    """A subset-selection report: its sorted category positions."""
    return [int(v) for v in np.asarray(report["subset"] if isinstance(report, np.void) else report)]


def subset_from_json(items: Sequence[Any], omega: int, k: int) -> NDArray[np.int64]:
    """Lists of ``omega`` integers in ``0..k-1`` as an ``(n, omega)`` array (order checked by the mechanism)."""
    for i, item in enumerate(items):
        if not isinstance(item, list) or len(item) != omega or not all(type(v) is int for v in item):
            raise ValueError(f"SubsetSelection report {i} must be a list of {omega} integers; got {item!r:.60}")
        if not all(0 <= v < k for v in item):  # before numpy: a JSON integer may exceed 64 bits
            raise ValueError(f"SubsetSelection report {i} has a position outside 0..{k - 1}: {item!r:.60}")
    return np.array(items, dtype=np.int64).reshape(len(items), omega)


def rappor_to_json(cohort: Any, bits: int) -> dict[str, int]:
    """A RAPPOR report: ``{"cohort": c, "bits": b}``, bit ``i`` of ``b`` the Bloom bit ``i``."""
    return {"cohort": int(cohort), "bits": bits}


def rappor_from_json(items: Sequence[Any], cohorts: int, bits: int) -> list[tuple[int, int]]:
    """``(cohort, bits)`` of each report, checked below ``cohorts`` and ``2**bits``."""
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != {"cohort", "bits"}:
            raise ValueError(f"RAPPOR report {i} must be {{'cohort': int, 'bits': int}}; got {item!r:.60}")
        if any(type(item[key]) is not int or item[key] < 0 for key in ("cohort", "bits")):
            raise ValueError(f"RAPPOR report {i}: cohort and bits must be non-negative ints")
        if item["cohort"] >= cohorts or item["bits"] >> bits:
            raise ValueError(
                f"RAPPOR report {i}: cohort must be below {cohorts} and bits below 2**{bits}; got {item!r:.60}"
            )
        out.append((item["cohort"], item["bits"]))
    return out


def fields_to_json(report: Any, fields: Sequence[str], hex_fields: Sequence[str] = ()) -> dict[str, Any]:
    """A sketch report: its integer ``fields``, and the bytes of ``hex_fields`` as hex."""
    return {f: (bytes(report[f]).hex() if f in hex_fields else int(report[f])) for f in fields}


def check_fields(items: Sequence[Any], fields: Sequence[str], owner: str) -> None:
    """Each report is an object with exactly ``fields`` (their values are the mechanism's to check)."""
    for i, item in enumerate(items):
        if not isinstance(item, dict) or item.keys() != set(fields):
            raise ValueError(f"{owner} report {i} must be an object with fields {list(fields)}; got {item!r:.60}")


def dbitflip_to_json(report: Any) -> dict[str, list[int]]:
    """A dBitFlip report: its ``d`` sampled buckets and their bits."""
    return {"buckets": [int(v) for v in report["buckets"]], "bits": [int(v) for v in report["bits"]]}


def dbitflip_from_json(items: Sequence[Any], d: int, dtype: np.dtype[Any]) -> NDArray[np.void]:
    """``{"buckets": [d ints], "bits": [d ints]}`` objects as a structured array of ``dtype``."""
    arr = np.empty(len(items), dtype=dtype)
    for i, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != {"buckets", "bits"}:
            raise ValueError(
                f"DBitFlip report {i} must be {{'buckets': [{d} ints], 'bits': [{d} 0/1]}}; got {item!r:.60}"
            )
        for key in ("buckets", "bits"):
            value = item[key]
            if (not isinstance(value, list) or len(value) != d
                    or any(type(v) is not int or v < 0 or v >= 1 << 32 for v in value)):
                raise ValueError(f"DBitFlip report {i}: {key} must be a list of {d} non-negative ints")
        arr[i] = (item["buckets"], item["bits"])
    return arr


def check_numbers(items: Sequence[Any], owner: str) -> None:
    """Each report is a JSON number (not a boolean)."""
    for i, v in enumerate(items):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise ValueError(f"report {v!r} at index {i} is not a number ({owner})")
