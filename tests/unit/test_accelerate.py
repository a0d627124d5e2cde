"""The numba sampler gives exactly the numpy sampler's bits for the same random bytes.

Both backends of :func:`deniable._randomness.dyadic_packed` are fed the same
byte streams (seeded, and crafted ones: sparse streams whose runs cross
draws, a stream with a 1 only every few hundred bits, constant bytes) and
must return the same packed bits and leave the source at the same place.
Then whole mechanisms (OUE, SUE, RAPPOR one-time reports, IRR and PRR) are
compared on seeded streams, and the import rules are checked: ``import
deniable`` never imports numba, ``auto`` imports it only for large batches,
``DENIABLE_ACCELERATOR=numpy`` never. Deterministic: no assertion depends on
chance.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest
from backends import both, needs_numba
from scripted import Scripted

import deniable as dn
from deniable import _accelerate as accelerate
from deniable import _randomness as randomness
from deniable._randomness import GeneratorSource, expansion_table


def sparse_stream(seed: int, n: int, one_every: int) -> bytes:
    """Bytes with about one 1 bit per ``one_every`` bits (long runs that cross draws)."""
    rng = np.random.default_rng(seed)
    bits = rng.random(8 * n) < 1 / one_every
    return np.packbits(bits).tobytes()


TABLES = {
    "oue 32-bit": expansion_table(1_155_279_520, 32)[None, :],
    "1/2": expansion_table(1 << 31, 32)[None, :],
    "5/8 in 3 bits": expansion_table(5, 3)[None, :],
    "1 - 2^-32": expansion_table((1 << 32) - 1, 32)[None, :],
    "p*/q* 64-bit": np.stack([expansion_table(3 << 60, 64), expansion_table((1 << 64) - 12345, 64)]),
    "0 and 1": np.stack([expansion_table(0, 32), expansion_table(1 << 32, 32)]),
}


@needs_numba
@pytest.mark.parametrize("name", list(TABLES))
@pytest.mark.parametrize("count", [1, 7, 8, 63, 1000, 65_536, 65_537, 200_003])
def test_same_bytes_same_bits_seeded(name: str, count: int, restore_accelerator: None) -> None:
    tables = TABLES[name]
    select = np.random.default_rng(count).integers(0, 256, (count + 7) // 8, dtype=np.uint8)

    def run() -> tuple[bytes, bytes]:
        source = GeneratorSource(np.random.default_rng(count * 7 + len(name)))
        out = randomness.dyadic_packed(tables, count, source, select if tables.shape[0] == 2 else None)
        return out.tobytes(), source.random_bytes(16)  # the next bytes: both read the same amount

    a, b = both(run)
    assert a == b


@needs_numba
@pytest.mark.parametrize(("one_every", "count"), [(2, 70_000), (9, 70_000), (40, 4_099), (300, 4_099), (5000, 64),
                                                   (5000, 5)])
def test_same_bytes_same_bits_sparse_streams(one_every: int, count: int, restore_accelerator: None) -> None:
    """Runs longer than a byte, a word and a whole draw (a draw with no 1 at all continues the run)."""
    tables = TABLES["p*/q* 64-bit"]
    select = np.packbits(np.arange(count) % 3 == 0)
    stream = sparse_stream(one_every + count, count * one_every // 4 + count + (1 << 16), one_every)

    def run() -> tuple[bytes, int]:
        source = Scripted(stream)
        out = randomness.dyadic_packed(tables, count, source, select)
        return out.tobytes(), len(source.data)

    a, b = both(run)
    assert a == b


@needs_numba
@pytest.mark.parametrize("byte", [0x01, 0x11, 0x55, 0x80, 0xAA, 0xFF])
def test_same_bytes_same_bits_constant_streams(byte: int, restore_accelerator: None) -> None:
    class Constant:
        secure = False

        def random_bytes(self, n: int) -> bytes:
            return bytes([byte]) * n

    for numerator, bits in [(1 << 31, 32), (5, 3), (3 << 29, 32), (1_155_279_520, 32)]:
        draw = partial(randomness.bernoulli_packed, numerator, bits, 1001)
        a, b = both(lambda: draw(Constant()).tobytes())  # noqa: B023 (called at once)
        assert a == b, (byte, numerator)


@needs_numba
def test_a_stuck_source_fails_the_same_way(restore_accelerator: None) -> None:
    messages = []
    for name in ("numpy", "numba"):
        accelerate.set_accelerator(name)
        with pytest.raises(RuntimeError, match="zero bits in a row .* broken or stuck") as err:
            randomness.bernoulli_packed(1, 2, 64, Scripted(bytes(1 << 20)))
        messages.append(str(err.value))
    assert messages[0] == messages[1]


@needs_numba
@pytest.mark.parametrize(
    "make",
    [
        lambda: dn.OUE(1024, epsilon=1.0),
        lambda: dn.OUE(13, epsilon=2.0),
        lambda: dn.SUE(70, epsilon=1.0),
        lambda: dn.RAPPOR(range(40), epsilon=2.0, num_bits=64),
        lambda: dn.RAPPOR(range(40), f=0.5, num_bits=100, num_hashes=3, num_cohorts=8),
        lambda: dn.RAPPOR(range(40), f=0.25, p=0.0, q=1.0, num_bits=16),
    ],
    ids=["OUE-1024", "OUE-13", "SUE-70", "RAPPOR-64", "RAPPOR-100", "RAPPOR-16-pq01"],
)
def test_mechanisms_give_the_same_reports(make: Callable[[], Any], restore_accelerator: None) -> None:
    """Seeded batches (several blocks of lanes), one IRR batch and a client's PRR: equal under both."""
    m = make()
    values = np.random.default_rng(1).integers(0, m.k, 3_000)

    def run() -> list[bytes]:
        out = [np.asarray(m.privatize_many(values, rng=5)).tobytes()]
        if isinstance(m, dn.RAPPOR):
            prr = m._bit_words(m.privatize_many(values, rng=6))
            out.append(m._irr(prr, GeneratorSource(np.random.default_rng(7))).tobytes())
            out.append(m.client(secret=b"s" * 32, cohort=0).permanent(m.domain[3]).to_bytes(16, "little"))
        return out

    a, b = both(run)
    assert a == b


@needs_numba
def test_the_chosen_backend_decodes(restore_accelerator: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``numba`` chosen, the compiled decoder (wrapped here to record its use) is built for the call's
    tables and decides the lanes; with ``numpy`` it is not asked. Both give the same bits. Nothing loaded
    yet (as in a new process): choosing ``numba`` loads it."""
    monkeypatch.setattr(accelerate, "_kernel", None)
    accelerate.set_accelerator("numba")
    real = accelerate.run_decoder(1)
    assert real is not None and real is accelerate.run_decoder(1)
    built: list[bytes] = []

    def factory(tables: np.ndarray) -> Any:
        built.append(tables.tobytes())
        return real(tables)

    monkeypatch.setattr(accelerate, "_kernel", factory)
    table = expansion_table(5, 3)[None, :]
    fast = randomness.dyadic_packed(table, 100, GeneratorSource(np.random.default_rng(1)))
    assert built == [table.tobytes()]
    accelerate.set_accelerator("numpy")
    slow = randomness.dyadic_packed(table, 100, GeneratorSource(np.random.default_rng(1)))
    assert built == [table.tobytes()] and fast.tobytes() == slow.tobytes()


def test_settings(restore_accelerator: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings, and ``auto``'s choice by size, probing numba's presence once (as in a new process)."""
    monkeypatch.setattr(accelerate, "_found", None)
    assert accelerate.set_accelerator("numpy") in accelerate.ACCELERATORS
    assert accelerate.accelerator() == "numpy" and accelerate.run_decoder(1 << 30) is None
    accelerate.set_accelerator("auto")
    for _ in range(2):  # probed, then remembered
        assert (accelerate.run_decoder(1 << 30) is None) == (not accelerate.numba_available())
    assert accelerate.run_decoder(accelerate.AUTO_FROM - 1) is None  # small batches stay in numpy
    assert (accelerate.run_decoder(accelerate.AUTO_FROM) is None) == (not accelerate.numba_available())
    with pytest.raises(ValueError, match=r"^accelerator must be one of auto, numba, numpy; got 'fast'$"):
        accelerate.set_accelerator("fast")


PROBE = """
import json, sys
import numpy as np
import deniable as dn
from deniable import _accelerate as accelerate
seen = ["numba" in sys.modules]
m = dn.OUE(1024, epsilon=1.0)
m.privatize(3)  # one report: 1,024 bits, below AUTO_FROM
seen.append("numba" in sys.modules)
accelerate.PAYS_FROM = 1 << 17  # numba pays after two batches of 65,536 bits here (2**29 really)
m.privatize_many(np.zeros(64, dtype=int))  # 65,536 bits: not yet
seen.append("numba" in sys.modules)
m.privatize_many(np.zeros(64, dtype=int))  # 131,072 in all
seen.append("numba" in sys.modules)
print(json.dumps(seen))
"""


def test_numba_available_says_whether_numba_imports() -> None:
    """True exactly when ``import numba`` succeeds in this environment (whether it imports numba: the
    test below, in a new process)."""
    try:
        importlib.import_module("numba")
    except ImportError:
        installed = False
    else:
        installed = True
    assert accelerate.numba_available() is installed


@pytest.mark.parametrize("setting", ["auto", "numpy", ""])
def test_numba_is_imported_only_when_used(setting: str) -> None:
    env = dict(os.environ, DENIABLE_ACCELERATOR=setting)
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    used = setting != "numpy" and accelerate.numba_available()
    assert json.loads(out.stdout) == [False, False, False, used]


def test_a_bad_environment_setting_is_refused() -> None:
    env = dict(os.environ, DENIABLE_ACCELERATOR="gpu")
    out = subprocess.run([sys.executable, "-c", "import deniable"], capture_output=True, text=True, env=env,
                         check=False)
    assert out.returncode != 0 and "accelerator must be one of auto, numba, numpy; got 'gpu'" in out.stderr


def test_without_numba_auto_falls_back_and_numba_is_refused() -> None:
    """numba made unimportable: ``auto`` samples with numpy, asking for ``numba`` raises ImportError and
    leaves the setting as it was."""
    code = (
        "import sys\n"
        "sys.modules['numba'] = None\n"
        "import numpy as np, deniable as dn\n"
        "from deniable import _accelerate as accelerate\n"
        "dn.OUE(1024, epsilon=1.0).privatize_many(np.zeros(200, dtype=int))\n"
        "try:\n"
        "    accelerate.set_accelerator('numba')\n"
        "except ImportError:\n"
        "    print(accelerate.accelerator())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DENIABLE_ACCELERATOR"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "auto"


@pytest.mark.parametrize(
    "choose",
    [accelerate.run_decoder, accelerate.sketch_kernels, accelerate.skip_decoder],
    ids=["runs", "sketch", "skips"],
)
def test_each_setting_chooses_by_size(choose: Callable[[int], Any], restore_accelerator: None) -> None:
    """``numpy``: never compiled; ``numba``: compiled for any size; ``auto``: compiled from ``AUTO_FROM``
    bits or entries on, when numba is installed (and loaded, here by the ``numba`` setting: before that, the
    run decoder waits until numba pays, below). The same rule for the run decoder, the sketch loops and the
    gap decoder of the sparse sampler."""
    accelerate.set_accelerator("numpy")
    assert choose(1 << 30) is None
    if not accelerate.numba_available():
        pytest.skip("numba is not installed")
    accelerate.set_accelerator("numba")
    assert choose(1) is not None and choose(1 << 30) is not None
    accelerate.set_accelerator("auto")
    assert choose(accelerate.AUTO_FROM - 1) is None
    assert choose(accelerate.AUTO_FROM) is not None and choose(1 << 30) is not None


def test_the_run_decoder_loads_numba_once_it_pays(restore_accelerator: None,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto``, nothing loaded (as in a new process): the run decoder stays in numpy until the bits it
    has decoded there reach ``PAYS_FROM``, in one call or adding up; numba loaded by anything (here the
    sketch loops) is used from ``AUTO_FROM`` bits on."""
    accelerate.set_accelerator("auto")
    if not accelerate.numba_available():
        pytest.skip("numba is not installed")
    for loaded_by in (None, accelerate.sketch_kernels):
        monkeypatch.setattr(accelerate, "_kernel", None)
        monkeypatch.setattr(accelerate, "_decoded", 0)
        if loaded_by is not None:
            assert loaded_by(accelerate.AUTO_FROM) is not None
            assert accelerate.run_decoder(accelerate.AUTO_FROM) is not None
            continue
        assert accelerate.run_decoder(accelerate.PAYS_FROM // 2) is None
        assert accelerate.run_decoder(accelerate.PAYS_FROM // 2 - 1) is None
        assert accelerate._kernel is None  # not imported: numpy decoded them
        assert accelerate.run_decoder(accelerate.AUTO_FROM) is not None  # adds up to PAYS_FROM
        assert accelerate.run_decoder(accelerate.AUTO_FROM - 1) is None  # small calls stay in numpy
        monkeypatch.setattr(accelerate, "_kernel", None)
        monkeypatch.setattr(accelerate, "_decoded", 0)
        assert accelerate.run_decoder(accelerate.PAYS_FROM) is not None  # one call that pays


def test_without_numba_in_this_process(restore_accelerator: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above within this process (numba made unimportable, nothing loaded or probed yet): ``auto``
    finds no numba and samples large batches with numpy; ``numba`` raises ImportError at once and the
    setting stays ``auto``."""
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.delitem(sys.modules, "deniable._runs_numba", raising=False)
    monkeypatch.delattr(dn, "_runs_numba", raising=False)
    monkeypatch.setattr(accelerate, "_kernel", None)
    monkeypatch.setattr(accelerate, "_found", None)
    accelerate.set_accelerator("auto")
    assert not accelerate.numba_available() and accelerate.run_decoder(1 << 30) is None
    assert accelerate.sketch_kernels(1 << 30) is None and accelerate.skip_decoder(1 << 30) is None
    source = Scripted(bytes([0xFF]) * (accelerate.AUTO_FROM // 4 + 64))  # every lane ends at G = 0: c_0 = 1
    assert np.unpackbits(randomness.bernoulli_packed(5, 3, accelerate.AUTO_FROM, source)).all()
    with pytest.raises(ImportError):
        accelerate.set_accelerator("numba")
    assert accelerate.accelerator() == "auto"


@needs_numba
@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"), reason="numba's JIT is disabled")
def test_the_kernel_compiles_without_a_writable_cache() -> None:
    """With nowhere to cache (numba's cache locators removed), the kernel is compiled in the process and
    gives the numpy bits."""
    code = (
        "import numba.core.caching as caching\n"
        "caching.CacheImpl._locator_classes = []\n"
        "import numpy as np\n"
        "from deniable import _accelerate as accelerate, _randomness as randomness, _runs_numba\n"
        "draw = lambda: randomness.bernoulli_packed(5, 3, 100_000, randomness.resolve(9)).tobytes()\n"
        "accelerate.set_accelerator('numba')\n"
        "fast = draw()\n"
        "accelerate.set_accelerator('numpy')\n"
        "print(type(_runs_numba.decide._cache).__name__, fast == draw())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["NullCache", "True"]
