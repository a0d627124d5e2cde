"""RAPPOR clients with persistent state: the permanent response survives re-creation."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from deniable._client_state import MemoryStore, StateError
from deniable.mechanisms._rappor import RAPPOR


def _prrs(client: object, values: list[str]) -> list[int]:
    return [client.permanent(v) for v in values]  # type: ignore[attr-defined]


@pytest.mark.parametrize("p,q", [(0.5, 0.75), (0.0, 1.0)])
def test_same_state_same_permanent_response(tmp_path: Path, p: float, q: float) -> None:
    m = RAPPOR(list("abcdefgh"), f=0.5, p=p, q=q, num_bits=64, num_cohorts=8)
    path = tmp_path / "device.json"
    first = m.client(state=path)
    again = m.client(state=path)  # a re-created client: same secret, same cohort
    values = list("abcdefgh")
    assert again.cohort == first.cohort and _prrs(again, values) == _prrs(first, values)
    other = m.client(state=tmp_path / "other.json")
    # another state is another independent draw: 8 values x 64 bits with f=0.5 agree by chance w.p. 2**-128
    assert _prrs(other, values) != _prrs(first, values)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    if (p, q) == (0.0, 1.0):  # no instantaneous step: the report is the permanent response itself
        reports = {(int(r["cohort"]), int(r["bits"])) for r in (m.client(state=path).privatize("c") for _ in range(10))}
        assert reports == {(first.cohort, first.permanent("c"))}


def test_state_survives_a_new_process(tmp_path: Path) -> None:
    path = tmp_path / "device.json"
    script = (
        "import sys; from deniable.mechanisms._rappor import RAPPOR\n"
        "m = RAPPOR(list('abcd'), f=0.5, num_bits=32, num_cohorts=8)\n"
        "c = m.client(state=sys.argv[1]); print(c.cohort, c.permanent('b'))\n"
    )
    runs = [subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True)
            for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout
    m = RAPPOR(list("abcd"), f=0.5, num_bits=32, num_cohorts=8)
    c = m.client(state=path)
    assert runs[0].stdout.split() == [str(c.cohort), str(c.permanent("b"))]


def test_state_of_another_configuration_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "device.json"
    RAPPOR(list("abcd"), f=0.5, num_cohorts=8).client(state=path)
    saved = path.read_bytes()
    for other in (
        RAPPOR(list("abcd"), f=0.25, num_cohorts=8),  # another f
        RAPPOR(list("abcde"), f=0.5, num_cohorts=8),  # another domain
    ):
        with pytest.raises(StateError, match="another configuration|not to 'rappor' with fingerprint"):
            other.client(state=path)
    assert path.read_bytes() == saved


def test_state_and_explicit_secret_are_exclusive_and_cohort_is_checked() -> None:
    m = RAPPOR(list("abcd"), f=0.5, num_cohorts=4)
    with pytest.raises(TypeError, match="either state or secret"):
        m.client(state=MemoryStore(), secret=b"s" * 32)
    store = MemoryStore()
    m.client(state=store)
    data = store.load()
    assert data is not None and 0 <= data["fields"]["cohort"] < 4 and "secret" not in repr(m.client(state=store))
    bad = MemoryStore()
    data["fields"]["cohort"] = "3"
    bad.create(json.loads(json.dumps(data)))
    with pytest.raises(StateError, match="'cohort' must be an int"):
        m.client(state=bad)


def test_explicit_secret_keeps_its_old_permanent_responses() -> None:
    """The PRR derivation is unchanged: HMAC-SHA256(secret, type NUL value) keys SHAKE-256."""
    import hmac

    from deniable._client_state import SecretStream

    m = RAPPOR(list("abc"), f=0.5, num_bits=32, num_cohorts=4)
    key = hmac.new(b"s" * 32, b"str\x00b", "sha256").digest()
    expected = int(m._prr(m.bloom[1, 1:2], SecretStream(key))[0]) & 0xFFFFFFFF  # the report keeps num_bits
    assert m.client(secret=b"s" * 32, cohort=1).permanent("b") == expected
