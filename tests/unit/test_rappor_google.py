"""RAPPOR with google/rappor's Bloom hashing: known answers, Google's report forms, configs, wide filters."""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable.errors import ConfigError, ReportError
from deniable.mechanisms._rappor import HASHINGS, RAPPOR, google_bloom_bits


def _cohort_of(prefix: bytes) -> int:
    return int.from_bytes(prefix, "big")


@pytest.mark.parametrize(
    "message,md5_hex",
    [  # RFC 1321 appendix A.5 test suite: the cohort is the message's first 4 bytes, big-endian
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    ],
)
def test_bloom_bits_known_answers_from_the_md5_test_suite(message: str, md5_hex: str) -> None:
    digest = bytes.fromhex(md5_hex)
    cohort, word = _cohort_of(message[:4].encode()), message[4:]
    assert google_bloom_bits(word, cohort, 16, 256) == list(digest)
    assert google_bloom_bits(word, cohort, 4, 16) == [b % 16 for b in digest[:4]]
    assert google_bloom_bits(word, cohort, 2, 100) == [digest[0] % 100, digest[1] % 100]


def test_bloom_table_uses_the_cohort_and_utf8_value() -> None:
    """MD5(b'\\x00\\x00\\x00\\x03' + 'café' in UTF-8) = 6e1b...: bytes 0x6e, 0x1b set bits 110 and 27 of 128."""
    m = RAPPOR(["café", "tea"], f=0.5, num_bits=128, num_hashes=2, num_cohorts=4, hashing="google")
    import hashlib

    digest = hashlib.md5(b"\x00\x00\x00\x03" + "café".encode()).digest()
    want = sum(1 << (b % 128) for b in digest[:2])
    words = m.bloom[3, 0]
    assert sum(int(w) << (64 * i) for i, w in enumerate(words)) == want
    m16 = RAPPOR(["café", "tea"], f=0.5, num_bits=16, num_hashes=2, num_cohorts=4, hashing="google")
    assert int(m16.bloom[3, 0]) == sum(1 << (b % 16) for b in digest[:2])


def test_google_report_forms_round_trip() -> None:
    m = RAPPOR(list("abcde"), f=0.5, num_bits=32, num_cohorts=8, hashing="google")
    reports = m.privatize_many(list("abcdeabcde"), rng=3)
    as_ints = m.reports_to_google(reports)
    as_strings = m.reports_to_google(reports, bit_strings=True)
    assert all(len(s) == 32 and int(s, 2) == i for (_, s), (_, i) in zip(as_strings, as_ints, strict=True))
    for rows in (as_ints, as_strings):
        back = m.reports_from_google([c for c, _ in rows], [r for _, r in rows])
        assert m.aggregate(back) == m.aggregate(reports)
    # MSB first: the string's last character is bit 0
    one = m.reports_from_google([2], ["0" * 31 + "1"])
    assert m.reports_to_json(one) == [{"cohort": 2, "bits": 1}]
    with pytest.raises(ReportError, match="32 characters 0/1"):
        m.reports_from_google([0], ["0101"])
    with pytest.raises(ReportError, match="32 characters 0/1"):
        m.reports_from_google([0], ["2" * 32])
    with pytest.raises(ValueError, match="cohort"):
        m.reports_from_google([8], [1])


def test_config_records_the_hashing_and_rejects_an_unknown_one() -> None:
    g = RAPPOR(list("abc"), f=0.5, num_cohorts=4, hashing="google")
    s = RAPPOR(list("abc"), f=0.5, num_cohorts=4)
    assert g.to_config()["params"]["hash"] == HASHINGS["google"]
    assert s.to_config()["params"]["hash"] == HASHINGS["sha256"] == "sha256(cohort NUL type NUL value)"
    assert dn.from_config(g.to_config()) == g and dn.from_config(g.to_config()).hashing == "google"
    assert g != s and g.fingerprint != s.fingerprint
    assert not np.array_equal(g.bloom, s.bloom)
    old = s.to_config()
    del old["params"]["hash"]  # configs without the field mean deniable's own hashing
    assert dn.from_config(old) == s and dn.from_config(old).hashing == "sha256"
    bad = g.to_config()
    bad["params"]["hash"] = "sha1(cohort, hash_no, value)"
    with pytest.raises(ConfigError, match="params.hash.*does not know"):
        dn.from_config(bad)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"hashing": "md5"}, "hashing must be one of"),
        ({"hashing": "google", "num_hashes": 17}, "num_hashes must be an int in 1..16"),
        ({"num_hashes": 9, "num_bits": 64}, "num_hashes must be an int in 1..8"),
        ({"num_bits": 257}, "num_bits must be an int in 1..256"),
    ],
)
def test_invalid_hashing_parameters(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RAPPOR(list("abc"), f=0.5, **kwargs)  # type: ignore[arg-type]


def test_google_hashing_needs_string_categories() -> None:
    with pytest.raises(ValueError, match="string categories"):
        RAPPOR([1, 2, 3], f=0.5, hashing="google")


@pytest.mark.parametrize("num_bits", [100, 256])
def test_wide_filters_keep_every_bit(num_bits: int) -> None:
    """Bit counts of wide reports equal a per-report integer loop; JSON ints carry all bits."""
    m = RAPPOR(list("abcdefgh"), f=0.5, num_bits=num_bits, num_hashes=4, num_cohorts=4, hashing="google")
    reports = m.privatize_many(list("abcdefgh") * 25, rng=5)
    items = m.reports_to_json(reports)
    assert max(item["bits"] for item in items).bit_length() > 64
    assert max(item["bits"] for item in items) < 1 << num_bits
    table = np.zeros((4, num_bits + 1), dtype=np.int64)
    for item in items:
        table[item["cohort"], 0] += 1
        for i in range(num_bits):
            table[item["cohort"], i + 1] += item["bits"] >> i & 1
    assert np.array_equal(m.aggregate(m.reports_from_json(items)).counts, table.ravel())
    with pytest.raises(ValueError, match=f"below 2\\*\\*{num_bits}"):
        m.reports_from_json([{"cohort": 0, "bits": 1 << num_bits}])
    client = m.client(secret=b"s" * 32, cohort=1)
    assert 0 <= client.permanent("c") < 1 << num_bits


def test_google_report_errors_name_the_row() -> None:
    """Whole messages; the error's ``index`` is the bad row; only the characters 0 and 1 are bits."""
    m = RAPPOR(list("abc"), f=0.5, num_bits=8, num_cohorts=4, hashing="google")
    with pytest.raises(ReportError, match=r"^reports_from_google: 2 cohorts but 1 irrs$"):
        m.reports_from_google([0, 1], [1])
    for bad in ("X" * 8, "0101010", "01010102"):
        with pytest.raises(ReportError, match=r"^Google report 1: irr must be 8 characters 0/1 \(most significant "
                                              rf"first\); got '{bad}'$") as caught:
            m.reports_from_google([0, 1], ["0" * 8, bad])
        assert caught.value.index == 1
