"""``rng`` semantics (SPEC 7 plus a secure default) and fork safety of the secure source."""

from __future__ import annotations

import os

import numpy as np
import pytest

import deniable as dn
from deniable._randomness import GeneratorSource, SecureSource, resolve


def test_none_means_the_os_csprng() -> None:
    source = resolve(None)
    assert isinstance(source, SecureSource) and source.secure
    assert len(source.random_bytes(32)) == 32
    assert resolve(source) is source


@pytest.mark.parametrize("rng", [7, np.int64(7), np.random.SeedSequence(7)], ids=["int", "np.int64", "SeedSequence"])
def test_seeds_mean_simulation(rng) -> None:  # type: ignore[no-untyped-def]
    source = resolve(rng)
    assert isinstance(source, GeneratorSource) and not source.secure
    again = resolve(rng)
    assert source.random_bytes(64) == again.random_bytes(64)  # reproducible


def test_generator_is_used_not_copied() -> None:
    gen = np.random.default_rng(3)
    source = resolve(gen)
    assert isinstance(source, GeneratorSource) and source.generator is gen
    twin = np.random.default_rng(3)
    assert source.random_bytes(16) == twin.bytes(16)
    assert resolve(source) is source


@pytest.mark.parametrize("rng", [True, False, np.bool_(True), np.random.RandomState(1), 1.5, "7", [1]],
                         ids=["True", "False", "np.bool_", "RandomState", "float", "str", "list"])
def test_other_rng_values_rejected(rng) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match="rng must be None, an int seed or a numpy Generator"):
        resolve(rng)


def test_seeded_and_secure_paths_differ_in_kind() -> None:
    m = dn.GRR(1000, epsilon=1.0)
    a = m.privatize_many([0] * 200, rng=42)
    b = m.privatize_many([0] * 200, rng=42)
    np.testing.assert_array_equal(a, b)
    c = m.privatize_many([0] * 200)
    d = m.privatize_many([0] * 200)
    # two secure batches of 200 reports from 1000 categories agree everywhere with
    # probability far below 1e-100
    assert not np.array_equal(c, d)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_child_and_parent_draw_differently() -> None:
    """After fork() the child shares no random state with the parent (nothing is buffered)."""
    m = dn.OUE(64, epsilon=1.0)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_end)
            payload = resolve(None).random_bytes(32) + bytes(m.privatize_many([0] * 4).ravel())
            os.write(write_end, payload)
        finally:
            os._exit(0)
    os.close(write_end)
    parent = resolve(None).random_bytes(32) + bytes(m.privatize_many([0] * 4).ravel())
    chunks = []
    while chunk := os.read(read_end, 4096):
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    child = b"".join(chunks)
    assert len(child) == len(parent) == 32 + 4 * 8
    assert child[:32] != parent[:32]
    assert child[32:] != parent[32:]


@pytest.mark.parametrize("rng", [np.random.RandomState(0), True, 1.5, "seed"],
                         ids=["RandomState", "True", "1.5", "seed"])
def test_bad_rng(rng) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match="rng must be None, an int seed or a numpy Generator"):
        dn.GRR(4, epsilon=1.0).privatize_many([0, 1], rng=rng)
