"""Optional compiled kernels, with the pure-numpy code as the reference and fallback.

The exact Bernoulli sampler (:func:`deniable._randomness.dyadic_packed`)
decodes a stream of random bits into runs, one per output bit. numpy does
that with ``flatnonzero`` and ``diff`` (an int64 index per bit); with numba
installed (``pip install 'deniable[fast]'``) a compiled loop does it in a
fraction of the time. Both read the same bytes and give the same bits for
the same bytes (tested); numba is imported only when a large enough batch
is first sampled, never by ``import deniable``. The count-mean sketches'
hashing (BLAKE2b and the buckets) and tables and the column counts of bit-packed reports
(:mod:`deniable._columns`) have compiled loops too
(:func:`sketch_kernels`), chosen the same way; they compute the same
integers as numpy.

Which one runs is chosen by :func:`set_accelerator` or, at start-up, by the
environment variable ``DENIABLE_ACCELERATOR``:

* ``auto`` (the default): numba if it is installed, for batches of at least
  ``AUTO_FROM`` bits (or table entries; smaller ones, such as a single
  report, stay in numpy and do not pay numba's import). The run decoder
  waits until numba pays: importing numba and loading its kernels from the
  cache costs some 0.7-0.9 CPU seconds, which it earns back at 1.2-1.7 ns
  per decoded bit, so the decoder stays in numpy until this process has
  decoded ``PAYS_FROM`` bits (a call of that many, or calls adding up to
  it), unless numba is loaded already (a deterministic rent-or-buy rule:
  never more than twice the better choice's cost in hindsight);
* ``numba``: numba for every batch (an ImportError if it is not installed);
* ``numpy``: never numba.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = [
    "ACCELERATORS", "AUTO_FROM", "PAYS_FROM", "accelerator", "set_accelerator", "numba_available", "run_decoder",
    "runs_compiled", "skip_decoder", "sketch_kernels",
]

ACCELERATORS = ("auto", "numba", "numpy")
"""The accepted settings: ``auto`` (numba for large calls when installed), ``numba``, ``numpy``."""
AUTO_FROM = 1 << 16
"""Bits per call from which ``auto`` uses numba (a single report of up to 65,535 bits stays in numpy)."""
PAYS_FROM = 1 << 29
"""Bits decoded in numpy after which ``auto`` loads numba for the run decoder (about 5.4 x 10^8: where
numba's import and kernel loading, 0.7-0.9 CPU s, equal its saving at 1.2-1.7 ns per bit)."""

_lock = threading.Lock()
_decoded = 0  # bits the run decoder has decoded in numpy under ``auto`` in this process
_kernel: Callable[..., Any] | None = None
_sketch: ModuleType | None = None
_skips: Callable[..., Any] | None = None


def _check(name: str) -> str:
    if name not in ACCELERATORS:
        raise ValueError(f"accelerator must be one of {', '.join(ACCELERATORS)}; got {name!r}")
    return name


_mode = _check(os.environ.get("DENIABLE_ACCELERATOR", "auto").strip().lower() or "auto")


def numba_available() -> bool:
    """Whether numba can be imported (without importing it).

    Returns
    -------
    bool
        True if ``import numba`` would find the package (``pip install
        'deniable[fast]'``); numba itself is not imported.

    Examples
    --------
    >>> import deniable as dn
    >>> dn.numba_available() in (True, False)
    True
    """
    return importlib.util.find_spec("numba") is not None


def accelerator() -> str:
    """The current setting: ``auto``, ``numba`` or ``numpy``.

    Returns
    -------
    str
        The backend chosen by :func:`set_accelerator`, or at start-up by the
        environment variable ``DENIABLE_ACCELERATOR`` (``auto`` if unset).

    Examples
    --------
    >>> import deniable as dn
    >>> dn.accelerator() in ("auto", "numba", "numpy")
    True
    """
    return _mode


def set_accelerator(name: str) -> str:
    """Choose the backend (``auto``, ``numba`` or ``numpy``); returns the previous setting.

    ``numba`` compiles (or loads from numba's cache) the kernel at once and
    raises ImportError if numba is not installed. Both backends give the
    same reports for the same random bytes, so the setting changes speed
    only.

    Parameters
    ----------
    name : {"auto", "numba", "numpy"}
        ``auto``: numba, if installed, for calls of at least ``AUTO_FROM``
        bits (the samplers' run decoder once numba pays: after ``PAYS_FROM``
        bits, or when it is loaded already); ``numba``: numba for every
        call; ``numpy``: never numba.

    Returns
    -------
    str
        The setting before this call (to restore it afterwards).

    Raises
    ------
    ValueError
        ``name`` is not one of the three settings.
    ImportError
        ``name`` is ``numba`` and numba is not installed (the setting is
        then left unchanged).

    Examples
    --------
    >>> import deniable as dn
    >>> previous = dn.set_accelerator("numpy")
    >>> dn.accelerator()
    'numpy'
    >>> _ = dn.set_accelerator(previous)
    """
    global _mode
    if _check(name) == "numba":
        _load()  # before switching: without numba the setting stays as it was
    previous, _mode = _mode, name
    return previous


def _load() -> Callable[..., Any]:
    global _kernel, _sketch, _skips
    with _lock:
        if _kernel is None or _sketch is None or _skips is None:
            from deniable import _runs_numba, _sketch_numba, _skips_numba

            _kernel, _sketch, _skips = _runs_numba.decoder, _sketch_numba, _skips_numba.decode
        return _kernel


def run_decoder(bits: int) -> Callable[..., Any] | None:
    """For a call of ``bits`` output bits: None for numpy, or the compiled decoder's factory
    (``factory(tables)`` gives ``decode(octets, carried, select, out, lane0, need) -> (decided, zeros)``).
    Under ``auto``, numpy until numba pays (``PAYS_FROM``) or is loaded."""
    if not _use_numba(bits) or not _runs_pay(bits, count=True):
        return None
    return _load()


def runs_compiled(bits: int) -> bool:
    """Whether a batch of ``bits`` run-decoded bits would be decoded compiled, by the setting: under
    ``auto``, numba when it is loaded already or pays now (``PAYS_FROM``, counting what was decoded in
    numpy so far; numba is then loaded, and the bits are counted by the decoder's calls, not here)."""
    if not _use_numba(bits) or not _runs_pay(bits, count=False):
        return False
    _load()
    return True


def _runs_pay(bits: int, count: bool) -> bool:
    """Whether numba pays for ``bits`` more run-decoded bits: always, but under ``auto`` before it is
    loaded, once the bits decoded in numpy (with these, counted when ``count``) reach ``PAYS_FROM``."""
    global _decoded
    if _mode != "auto" or _kernel is not None:
        return True
    with _lock:
        if count:
            _decoded += bits
        return _decoded + (0 if count else bits) >= PAYS_FROM


def skip_decoder(bits: int) -> Callable[..., Any] | None:
    """For a call of ``bits`` output bits: None for numpy, or the compiled gap decoder of
    :func:`deniable._skips.sparse_packed` (``decode(words, start, table, pos, count, out)``)."""
    if not _use_numba(bits):
        return None
    _load()
    return _skips


def sketch_kernels(work: int) -> ModuleType | None:
    """For a call over ``work`` bits or table entries: None for numpy, or the compiled loops
    (``deniable._sketch_numba``: ``column_counts``, ``digests``, ``bucket_matrix``, ``support_sums``,
    ``matrix_sums``, ``collision_counts``)."""
    if not _use_numba(work):
        return None
    _load()
    return _sketch


def _use_numba(work: int) -> bool:
    """Whether a call over ``work`` bits (or table entries) runs compiled, by the setting."""
    return _mode == "numba" or (_mode == "auto" and work >= AUTO_FROM and _available())


_found: bool | None = None


def _available() -> bool:
    global _found
    if _found is None:
        _found = numba_available()
    return _found
