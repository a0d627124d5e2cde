"""The frequency-oracle base's sampling paths: one report, seeded batches, and how secure batches are split.

A secure batch is sampled in one piece up to ``2**16`` reports; from there it is
split over threads (after its first report, which fixes the report's shape
and dtype): two, or one per core while each part keeps at least ``2**15``
reports; each part is sampled ``2**15`` reports per thread at a time (from
``2**16`` to ``2**20``), or ``_block_reports`` where the mechanism sets it; a sampler whose runs numpy
decodes (it holds the GIL) takes one thread. A 1-D array of values is
checked and encoded part by part in the threads; a bad value raises the error
of the whole batch (the first bad value, its index in the batch). A seeded
batch is never split, so a seed gives the same reports whatever the batch size.
The split is checked exactly with a stand-in sampler that records its calls; no
assertion depends on chance.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from mechanism_grid import Case, params

import deniable as dn
from deniable._randomness import GeneratorSource, SecureSource, Source

SPLIT_FROM = 1 << 16  # secure batches of at least this many reports are split over two threads


@params()
def test_one_report_is_the_seeded_batch_of_one(case: Case) -> None:
    """``privatize(v, rng=seed)`` is ``privatize_many([v], rng=seed)[0]``: the same draws, the same report."""
    m = case.make()
    for value in (m.domain[0], m.domain[-1]):
        singles = [m.privatize(value, rng=seed) for seed in range(12)]
        batches = [m.privatize_many([value], rng=seed)[0] for seed in range(12)]
        assert m.reports_to_json(singles) == m.reports_to_json(batches), value


class Recorder:
    """Stands in for a mechanism's ``_sample``: the report of position ``i`` is the int32 row ``(i, 2 i)``.

    Records the size, the source and the thread of every call.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[int, Source, int]] = []
        self._lock = threading.Lock()

    def __call__(self, idx: np.ndarray, source: Source) -> np.ndarray:
        with self._lock:
            self.calls.append((int(idx.size), source, threading.get_ident()))
        return np.stack([idx, 2 * idx], axis=1).astype(np.int32)

    def sizes(self, thread: int | None = None) -> list[int]:
        """Call sizes, in call order (of one thread if given)."""
        return [size for size, _, ident in self.calls if thread is None or ident == thread]


def batch(n: int, rng: Any = None, block: int | None = None,
          run_bits: int = 0) -> tuple[Recorder, np.ndarray, np.ndarray]:
    """``privatize_many`` of ``n`` values of a 5-category GRR whose sampler is a Recorder (standing in for
    a run-decoding sampler of ``run_bits`` bits per report, if given).

    Returns the recorder, the reports and the reports the values should get.
    """
    m = dn.GRR(5, epsilon=1.0)
    recorder = Recorder()
    m._sample = recorder  # type: ignore[method-assign]  # instance attribute, this mechanism only
    m._run_bits = run_bits
    if block is not None:
        m._block_reports = block
    positions = np.arange(n) % 5
    reports = m.privatize_many(positions, rng=rng)
    return recorder, reports, np.stack([positions, 2 * positions], axis=1).astype(np.int32)


@pytest.mark.parametrize("n", [1, 1000, SPLIT_FROM - 1])
def test_secure_batches_below_the_threshold_are_sampled_at_once(n: int) -> None:
    recorder, reports, want = batch(n)
    assert recorder.sizes() == [n]
    assert isinstance(recorder.calls[0][1], SecureSource)
    np.testing.assert_array_equal(reports, want)


def test_secure_batches_from_the_threshold_are_split_over_two_threads() -> None:
    """The first report on the calling thread, then reports 1..32767 and 32768..65535, each in one
    call, on threads other than the caller's; every report lands in its own row."""
    recorder, reports, want = batch(SPLIT_FROM)
    main = threading.get_ident()
    assert recorder.sizes(main) == [1]
    assert recorder.calls[0][0] == 1  # first: it fixes the output's shape and dtype
    assert sorted(recorder.sizes()) == [1, SPLIT_FROM // 2 - 1, SPLIT_FROM // 2]
    assert all(isinstance(source, SecureSource) for _, source, _ in recorder.calls)
    assert reports.dtype == np.int32
    np.testing.assert_array_equal(reports, want)


def test_blocks_of_a_secure_batch_are_sampled_in_order_on_one_thread() -> None:
    """``_block_reports = 100``: the first report, then 100 at a time from report 1 (the last block short)."""
    recorder, reports, want = batch(1000, block=100)
    assert recorder.sizes(threading.get_ident()) == [1] + [100] * 9 + [99]
    np.testing.assert_array_equal(reports, want)
    recorder, reports, want = batch(100, block=100)  # one block: sampled at once
    assert recorder.sizes() == [100]
    np.testing.assert_array_equal(reports, want)


def test_blocks_split_each_threads_part() -> None:
    """Two threads' parts of 32,767 and 32,768 reports, in blocks of 2**14."""
    recorder, reports, want = batch(SPLIT_FROM, block=1 << 14)
    main = threading.get_ident()
    assert recorder.sizes(main) == [1]
    assert sorted(recorder.sizes()) == [1, (1 << 14) - 1, 1 << 14, 1 << 14, 1 << 14]
    np.testing.assert_array_equal(reports, want)


@pytest.mark.parametrize(("cores", "n", "parts"), [(8, 1 << 18, 8), (8, 3 << 15, 3), (16, 1 << 16, 2),
                                                    (1, 1 << 16, 2), (64, 1 << 18, 8)])
def test_large_secure_batches_use_every_core(monkeypatch: pytest.MonkeyPatch, cores: int, n: int,
                                             parts: int) -> None:
    """One part per core while each keeps at least 2**15 reports (two at least): the first report, then
    ``parts`` calls on other threads whose sizes differ by at most one; every report in its own row."""
    from deniable.mechanisms import _frequency

    monkeypatch.setattr(_frequency, "cores", lambda: cores)
    recorder, reports, want = batch(n)
    main = threading.get_ident()
    assert recorder.sizes(main) == [1]
    others = [size for size, _, ident in recorder.calls if ident != main]
    assert len(others) == parts and sum(others) == n - 1 and max(others) - min(others) <= 1
    np.testing.assert_array_equal(reports, want)


@pytest.mark.parametrize(("setting", "decoded", "split"), [("numpy", 0, False), ("numba", 0, True),
                                                          ("auto", 0, False), ("auto", 1 << 29, True)])
def test_run_decoded_batches_take_one_thread_while_numpy_decodes(
        monkeypatch: pytest.MonkeyPatch, restore_accelerator: None, setting: str, decoded: int,
        split: bool) -> None:
    """A sampler that decodes runs (``_run_bits`` per report: OUE, SUE, RAPPOR) is split over threads only
    where the compiled decoder runs it (numba chosen, or under ``auto`` once it pays: here after 2**29
    bits decoded in numpy, nothing loaded before); numpy's decoder holds the GIL, so it takes one thread."""
    from deniable import _accelerate as accelerate

    if split and not accelerate.numba_available():
        pytest.skip("numba is not installed")
    accelerate.set_accelerator(setting)
    monkeypatch.setattr(accelerate, "_kernel", None)  # nothing loaded, as in a new process
    monkeypatch.setattr(accelerate, "_decoded", decoded)
    recorder, reports, want = batch(SPLIT_FROM, run_bits=17)
    main = threading.get_ident()
    assert recorder.sizes(main) == ([1] if split else [SPLIT_FROM])
    assert sorted(recorder.sizes()) == ([1, SPLIT_FROM // 2 - 1, SPLIT_FROM // 2] if split else [SPLIT_FROM])
    np.testing.assert_array_equal(reports, want)


@pytest.mark.parametrize(("cores", "n", "block"), [(2, 1 << 18, 1 << 16), (1, 1 << 18, 1 << 16),
                                                    (8, 1 << 22, 1 << 18)])
def test_parts_are_sampled_in_blocks_of_2_15_per_thread(monkeypatch: pytest.MonkeyPatch, cores: int, n: int,
                                                        block: int) -> None:
    """Each thread's part is sampled in blocks of 2**15 reports per thread (each part's last block
    short): a block's working memory stays in the cache, and with more threads taking turns at the GIL
    each makes fewer calls."""
    from deniable.mechanisms import _frequency

    monkeypatch.setattr(_frequency, "cores", lambda: cores)
    recorder, reports, want = batch(n)
    main = threading.get_ident()
    assert recorder.sizes(main) == [1]
    parts = max(2, min(cores, n >> 15))
    sizes = [(n - 1) // parts + (i < (n - 1) % parts) for i in range(parts)]  # differ by at most one
    others = [size for size, _, ident in recorder.calls if ident != main]
    assert max(others) == block and sum(others) == n - 1
    assert len(others) == sum(-(-size // block) for size in sizes)
    np.testing.assert_array_equal(reports, want)


def test_blocks_grow_with_the_threads_up_to_2_20() -> None:
    from deniable.mechanisms._frequency import _block

    assert [_block(t) for t in (1, 2, 3, 4, 8, 16, 32, 64, 256)] == [
        1 << 16, 1 << 16, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 20, 1 << 20]


@pytest.mark.parametrize("categories", [5, ["a", "b", "c", "d", "e"]])
def test_a_bad_value_in_a_split_batch_is_the_batchs_first(monkeypatch: pytest.MonkeyPatch,
                                                          categories: Any) -> None:
    """Bad values in the second and the fourth of four parts: the error names the first, with its index in
    the whole batch (not in its part), as an unsplit batch's does; nothing is returned."""
    from deniable.mechanisms import _frequency

    monkeypatch.setattr(_frequency, "cores", lambda: 4)
    m = dn.GRR(categories, epsilon=1.0)
    bad = np.array([7]) if isinstance(categories, int) else np.array(["zz"])
    values = np.array(m.domain, dtype=np.result_type(np.array(m.domain), bad))[np.arange(1 << 18) % 5]
    values[[(1 << 16) + 3, 3 << 16]] = bad[0]
    with pytest.raises(dn.errors.CategoryError) as info:
        m.privatize_many(values)
    assert info.value.index == (1 << 16) + 3
    assert info.value.value == bad[0].item()
    values[0] = bad[0]  # the first report, sampled on the caller's thread
    with pytest.raises(dn.errors.CategoryError) as info:
        m.privatize_many(values)
    assert info.value.index == 0


@pytest.mark.parametrize("block", [None, 100])
def test_seeded_batches_are_never_split(block: int | None) -> None:
    """A seeded batch is one call on the caller's thread, whatever its size or the mechanism's blocks."""
    generator = np.random.default_rng(5)
    recorder, reports, want = batch(SPLIT_FROM, rng=generator, block=block)
    assert recorder.sizes(threading.get_ident()) == [SPLIT_FROM]
    source = recorder.calls[0][1]
    assert isinstance(source, GeneratorSource) and source.generator is generator
    np.testing.assert_array_equal(reports, want)


def test_seeded_batches_are_reproducible() -> None:
    m = dn.GRR(5, epsilon=1.0)
    values = np.arange(SPLIT_FROM) % 5
    first, second = m.privatize_many(values, rng=11), m.privatize_many(values, rng=11)
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, m.privatize_many(values, rng=12))
