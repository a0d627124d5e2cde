"""Report columns as Arrow arrays: each distinct cell parsed once.

A column of a CSV or Parquet file (or a partition of a Dask dataframe) is
taken as ``codes`` into its ``distinct`` cells, as text: Arrow's dictionary
of a text column as read, an integer column's range ``lo..hi`` (the code of
``v`` is ``v - lo``; a wide range is dictionary-encoded instead), a boolean
column's ``false``/``true``. Only the distinct cells become Python strings,
and only the distinct cells some row uses are parsed and checked
(:func:`deniable.wire.from_text`; hex bit vectors decoded by one numpy lookup); each row's report is then a take of the
checked distinct reports. So an integer column is never turned into text
per row, and a column of 10^7 reports of 16 categories is parsed 16 times.

The reports are those of ``from_text(mechanism, distinct[codes])``, and so
is the error: when a used distinct cell is refused, the rows are parsed one
by one, so that :class:`~deniable.errors.ReportError`'s ``index`` is the
first bad row and its ``reason`` the same as ever (the error path only).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.errors import ReportError
from deniable.mechanisms._contract import CheckedReports
from deniable.wire._codecs import hex_matrix
from deniable.wire._text import all_json_strings, from_text

__all__ = ["distinct_codes", "reports_from_codes", "aggregate_codes", "csv_convert_options",
           "csv_parse_options"]

_RANGE = 1 << 16  # an integer column spanning at most this many values is coded by offset (no hash)
_FEW = 256  # distinct cells parsed all at once, used by some row or not (each parse costs a few us)


def distinct_codes(column: Any) -> tuple[NDArray[np.str_], NDArray[np.intp]]:
    """An Arrow column as ``distinct`` numpy text (null as ``""``) and each row's ``codes`` into it.

    Binary cells that are not UTF-8 keep their bytes as surrogate escapes (for
    the checks to name them). Integers are written as ``str(int)`` and
    booleans as ``true``/``false``, as Arrow casts them to text.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):  # one chunk (a row group as read) is taken as it is, not copied
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    if not column.null_count and pa.types.is_integer(column.type):
        return _integers(column)
    if not column.null_count and pa.types.is_boolean(column.type):
        codes = _integer_values(pc.cast(column, pa.int8())).astype(np.intp)
        return np.array(["false", "true"]), codes
    if not pa.types.is_dictionary(column.type) or column.null_count:
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        binary = pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)
        column = pc.dictionary_encode(pc.fill_null(column if binary else pc.cast(column, pa.string()),
                                                   b"" if binary else ""))
    dictionary = column.dictionary
    words = dictionary.to_pylist()  # not to_numpy, which imports pandas
    if pa.types.is_binary(dictionary.type) or pa.types.is_large_binary(dictionary.type):
        words = [b.decode("utf-8", "surrogateescape") for b in words]
    distinct = np.asarray(words, dtype=str) if words else np.zeros(0, dtype=str)
    return distinct, _integer_values(column.indices).astype(np.intp, copy=False)


def _integer_values(array: Any) -> NDArray[np.integer]:
    """An Arrow integer array without nulls as numpy, on its data buffer (Arrow's ``to_numpy`` imports
    pandas, a fixed cost a command need not pay)."""
    import pyarrow as pa

    dtype = np.dtype(f"{'i' if pa.types.is_signed_integer(array.type) else 'u'}{array.type.bit_width // 8}")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def _integers(column: Any) -> tuple[NDArray[np.str_], NDArray[np.intp]]:
    """An integer column without nulls: codes ``v - lo`` into ``lo..hi`` when the range is narrow,
    else Arrow's dictionary of the distinct integers; the distinct integers as text either way."""
    import pyarrow.compute as pc

    values = _integer_values(column)
    if values.size == 0:
        return np.zeros(0, dtype=str), np.zeros(0, dtype=np.intp)
    extremes = pc.min_max(column)  # one pass (numpy's min and max take two)
    lo, hi = extremes["min"].as_py(), extremes["max"].as_py()
    if hi - lo < _RANGE:
        codes = (values - values.dtype.type(lo)).astype(np.intp) if lo else values.astype(np.intp, copy=False)
        return np.arange(lo, hi + 1).astype(str), codes
    encoded = pc.dictionary_encode(column)
    distinct = _integer_values(encoded.dictionary).astype(str)
    return distinct, _integer_values(encoded.indices).astype(np.intp)


def reports_from_codes(mechanism: Any, distinct: NDArray[np.str_], codes: NDArray[np.integer]) -> Any:
    """``from_text(mechanism, distinct[codes])``, parsing and checking each used distinct cell once.

    Raises :class:`~deniable.errors.ReportError` whose ``index`` is the first
    bad row (of ``codes``) and ``reason`` what is wrong with it.
    """
    taken = _taken(mechanism, distinct, codes)
    if taken is None:
        return from_text(mechanism, distinct[codes] if distinct.size else np.zeros(codes.size, dtype=str))
    parsed, slot = taken
    rows = slot[codes]
    return CheckedReports.wrap(np.asarray(parsed)[rows], parsed.checked[rows], parsed.fingerprint)


def aggregate_codes(mechanism: Any, distinct: NDArray[np.str_], codes: NDArray[np.integer]) -> Any:
    """The aggregate of the rows' reports (those of :func:`reports_from_codes`), as ``mechanism.aggregate``
    gives it; the error as there."""
    taken = _taken(mechanism, distinct, codes)
    if taken is None:
        return mechanism.aggregate(reports_from_codes(mechanism, distinct, codes))
    parsed, slot = taken
    return mechanism._aggregate_coded(parsed.checked[slot], codes)  # an unused cell's checked report: any


def _taken(
    mechanism: Any, distinct: NDArray[np.str_], codes: NDArray[np.integer]
) -> tuple[Any, NDArray[np.intp]] | None:
    """The checked reports of the used distinct cells and each distinct cell's place among them (0 for
    an unused cell); None when the rows must be parsed one by one (no rows, a refused cell: the error
    names the first bad row, or no mechanism's checked reports).

    Up to :data:`_FEW` distinct cells are first parsed all together, with no pass over the rows to
    find which are used; if one is refused (it may be a cell no row uses), the used ones alone. Not
    where a cell is quoted: whether quoted cells read as JSON depends on all the cells read together
    (:func:`~deniable.wire._text.from_text`), so an unused one must not take part."""
    if codes.size == 0 or distinct.size == 0:
        return None
    if distinct.size <= _FEW and not np.char.startswith(distinct, '"').any():
        parsed = _checked_cells(mechanism, np.ascontiguousarray(distinct))
        if parsed is not None:
            return parsed, np.arange(distinct.size)
    used = np.flatnonzero(np.bincount(codes, minlength=distinct.size))  # a batch may not use its whole dictionary
    parsed = _checked_cells(mechanism, distinct[used])
    if parsed is None:
        return None
    slot = np.zeros(distinct.size, dtype=np.intp)
    slot[used] = np.arange(used.size)
    return parsed, slot


def _checked_cells(mechanism: Any, cells: NDArray[np.str_]) -> Any:
    """The checked reports of ``cells``; None if one is refused or the mechanism has no checked reports."""
    try:
        parsed = _bit_vectors(mechanism, cells)
        if parsed is None:
            parsed = from_text(mechanism, cells)
    except ReportError:
        return None
    if type(parsed) is not CheckedReports or parsed.checked is None or parsed.fingerprint is None:
        return None
    return parsed


def _bit_vectors(mechanism: Any, cells: NDArray[np.str_]) -> Any:
    """Hex bit vectors decoded at once and checked by the mechanism: the checked reports of
    ``from_text``; None if they are no bit vectors or a cell is refused (``from_text`` then decides)."""
    if mechanism.report_kind != "bits" or all_json_strings(cells):
        return None
    packed = hex_matrix(cells, mechanism.report_bytes)
    if packed is None:
        return None
    try:
        checked = mechanism.validate(packed)
    except ValueError:
        return None
    return CheckedReports.wrap(checked, checked, mechanism.fingerprint)


def csv_convert_options(column: str, others: list[str] | tuple[str, ...] = ()) -> Any:
    """pyarrow CSV options reading ``column`` as Arrow's dictionary of its distinct cells as it reads
    (bytes, so that text that is not UTF-8 reaches the checks; empty cells as ``""``, not null), and
    either that column alone or, given their names as ``others``, the other columns too, as bytes (so
    they are written back as they were, nothing inferred)."""
    import pyarrow as pa
    from pyarrow import csv

    types = dict.fromkeys(others, pa.binary())
    types[column] = pa.dictionary(pa.int32(), pa.binary())
    return csv.ConvertOptions(include_columns=None if others else [column], column_types=types,
                              strings_can_be_null=False, quoted_strings_can_be_null=False)


def csv_parse_options() -> Any:
    """pyarrow CSV parse options: a quoted cell may hold line breaks (as in pandas and Python's csv)."""
    from pyarrow import csv

    return csv.ParseOptions(newlines_in_values=True)
