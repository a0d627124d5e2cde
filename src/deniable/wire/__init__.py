"""The wire format: versioned JSON for mechanism configurations and reports.

A configuration is what a device needs to randomize: the mechanism id, its
domain and its exact integer parameters (so a browser or another language
samples with exactly the same probabilities), plus the realised epsilon::

    {"format": "deniable.mechanism", "version": 1, "mechanism": "grr",
     "domain": ["A", "B", "C", "D"], "epsilon": 2.1972245773362196,
     "params": {"truth_numerator": 9, "other_numerator": 1}}

Rules (append-only, as for Google's ``dp_event``): a mechanism id or a field
never changes meaning; new mechanisms and fields get new names; readers
reject what they do not understand.

Reports travel as JSON arrays, one element per report, in the shape of the
mechanism's report kind (one codec per kind): BinaryRR ``true`` /
``false``; GRR the category value; SUE/OUE a hex string of the packed bits;
BLH/OLH ``{"seed": int, "value": int}``; Hadamard response an int; subset
selection the sorted list of category positions; RAPPOR ``{"cohort": int,
"bits": int}``. Their text in a table column is :func:`to_text` /
:func:`from_text` (the yes/no words :data:`YES_WORDS`, :data:`NO_WORDS`).

**Wire versions.** Version 1 writes every integer as a JSON integer. A
JSON integer above 2**53 is not exact in JavaScript's ``JSON.parse``, so
version 2 writes the integers that may exceed it as decimal strings: in a
configuration, the integers of ``params`` beyond 2**53 - 1; in reports, the
wide fields (an OLH/BLH ``seed``, RAPPOR's ``bits``) always. Everything else
is as in version 1. Readers take both: :func:`from_config` reads the
``version`` field of a configuration; reports carry no version, so their
reader is told it (``reports_from_json(items, wire_version=2)``).

Version 1 stays the default everywhere, so that configurations, their
fingerprints (the hash of the version-1 form) and stored surveys do not
change: version 2 is written on request only, ``to_json(m, wire_version=2)``
or ``to_version(m.to_config(), 2)`` for a configuration and
``m.reports_to_json(reports, wire_version=2)`` for reports.

Over HTTP (:mod:`deniable.server`), ``GET /surveys/{id}?wire_version=2``
serves every mechanism and design channel configuration of the survey in
version 2 (without the parameter: version 1, as before), and a response or
a batch of responses says the version of its reports with ``"wire_version":
2`` (default 1); the server stores them in version 1, so the same reports
store the same aggregates in either version. The Python client
(:class:`deniable.client.Client`) and the survey page speak version 2.

A survey platform keeps a report of the embeddable client (``deniable-embed.js``,
local mode) in its own field as ``{"format": "deniable.report", "version": 1,
"fingerprint": ..., "report": ...}`` (the report in version 2):
:func:`to_field` writes that text, :func:`from_fields` reads a column of them,
checking each fingerprint against the mechanism or design.

JSON Schemas of configurations, reports, survey definitions and results are
in :mod:`deniable.wire.schemas`.
"""

from __future__ import annotations

from deniable.wire._codecs import WIRE_VERSIONS
from deniable.wire._config import CONFIG_FORMAT, CONFIG_VERSION, from_config, from_json, to_json, to_version
from deniable.wire._fields import REPORT_FORMAT, REPORT_VERSION, from_fields, to_field
from deniable.wire._text import NO_WORDS, YES_WORDS, from_text, to_text

__all__ = [
    "from_config", "to_json", "from_json", "to_version", "CONFIG_FORMAT", "CONFIG_VERSION", "WIRE_VERSIONS",
    "MAX_BATCH", "to_text", "from_text", "YES_WORDS", "NO_WORDS",
    "to_field", "from_fields", "REPORT_FORMAT", "REPORT_VERSION",
]

MAX_BATCH = 10_000
"""Responses per batch request to the collection service (the server refuses more; clients split)."""
