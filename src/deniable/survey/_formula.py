"""Formulas as R users write them, translated for patsy (the ``survey`` extra).

* bare column names with dots (``cov.age``) become ``Q("cov.age")``; ``^``
  becomes ``**`` (R's power in ``I()`` and its crossing of terms);
* ``y ~ .`` stands for every other column of the data (not the response,
  nor the columns named in ``exclude``: the group, weights, strata, ...);
* ``factor(x)`` is ``C(x)``; ``relevel(x, ref = "a")`` (or ``relevel(factor(x),
  "a")``) is ``C(x, Treatment(reference="a"))``;
* ``log``, ``exp``, ``sqrt``, ``log1p`` are numpy's; ``scale(x)`` and
  ``center(x)`` standardize and centre over the rows that have a value
  (patsy's own propagate a missing value to every row, leaving "0 complete rows");
  ``poly(x, 2)`` is R's orthogonal polynomial (``raw=True``: plain powers);
* ``offset(z)`` (in the regressions' formulas, :func:`with_offset`) is a term
  whose coefficient is fixed at 1: ``eta_i = x_i' beta + z_i``; several add up.

A numeric column with a few integer codes (1/2/3) that enters a formula as
a number is flagged by :func:`warn_coded_numbers` (a ``DeniableWarning``
suggesting ``factor()``).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import patsy

from deniable.errors import DeniableWarning

__all__ = ["r_syntax", "plain", "namespace", "with_offset", "split_offsets", "warn_coded_numbers"]

_DOTTED = r"(?<![\w.\"'])({})(?![\w.\"'(])"
_RELEVEL = re.compile(r"relevel\(\s*(?:factor\(\s*([^()]+?)\s*\)|([^,()]+?))\s*,\s*(?:ref\s*=\s*)?([^()]+?)\s*\)")


def r_syntax(formula: str, columns: Any, exclude: tuple[str, ...] = ()) -> str:
    """The patsy formula for an R formula over a data frame with ``columns`` (module docstring)."""
    text = formula.replace("^", "**")
    if "~" in text:
        left, right = text.split("~", 1)
        if re.search(r"(?<![\w.])\.(?![\w.])", right):
            used = set(re.findall(r"[A-Za-z_][\w.]*", left)) | set(exclude)
            others = [str(c) for c in columns if str(c) not in used]
            right = re.sub(r"(?<![\w.])\.(?![\w.])", " + ".join(others) or "1", right)
        text = f"{left}~{right}"
    text = _RELEVEL.sub(lambda m: f"C({(m.group(1) or m.group(2)).strip()}, "
                                  f"Treatment(reference={m.group(3).strip()}))", text)
    text = re.sub(r"(?<![\w.])factor\(", "C(", text)
    dotted = sorted((c for c in columns if isinstance(c, str) and "." in c), key=len, reverse=True)
    if dotted:
        pattern = re.compile(_DOTTED.format("|".join(map(re.escape, dotted))))
        text = pattern.sub(lambda m: f'Q("{m.group(1)}")', text)
    return text


def plain(name: str) -> str:
    """A term's name as the user wrote it: ``Q("cov.age")`` back to ``cov.age``."""
    return re.sub(r"""Q\((["'])(.*?)\1\)""", r"\2", name)


class _Standardize:
    """patsy's stateful ``scale``/``center`` over the rows that have a value (NaN stays NaN, then is dropped)."""

    def __init__(self) -> None:
        self.sum, self.sum_sq, self.count = 0.0, 0.0, 0

    def memorize_chunk(self, x: Any, center: bool = True, rescale: bool = True, ddof: int = 1) -> None:
        v = np.asarray(x, dtype=np.float64)
        v = v[np.isfinite(v)]
        self.sum += float(v.sum())
        self.sum_sq += float((v**2).sum())
        self.count += int(v.size)

    def memorize_finish(self) -> None:
        pass

    def transform(self, x: Any, center: bool = True, rescale: bool = True, ddof: int = 1) -> Any:
        v = np.asarray(x, dtype=np.float64)
        mean = self.sum / self.count if self.count else 0.0
        out = v - mean if center else v
        if rescale:
            var = (self.sum_sq - self.count * mean**2) / max(self.count - ddof, 1)
            out = out / np.sqrt(var) if var > 0 else out
        return out


class _Center(_Standardize):
    def transform(self, x: Any, center: bool = True, rescale: bool = False, ddof: int = 1) -> Any:
        return super().transform(x, True, False, ddof)


class _Poly:
    """patsy's stateful ``poly(x, degree)``: R's orthogonal polynomials (``raw=True``: the powers ``x .. x^degree``).

    Fitted on the rows that have a value by the three-term recurrence ``P_0 = 1``,
    ``P_{k+1} = (x - a_k) P_k - (n_k / n_{k-1}) P_{k-1}``, ``a_k = sum x P_k^2 / n_k``,
    ``n_k = sum P_k^2``; the columns are ``P_k / sqrt(n_k)`` for ``k = 1..degree``,
    R's ``poly()`` and ``predict.poly`` exactly.
    """

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.alpha: list[float] = []
        self.norm2: list[float] = []

    def memorize_chunk(self, x: Any, degree: int = 1, raw: bool = False) -> None:
        v = np.asarray(x, dtype=np.float64)
        self.values.append(v[np.isfinite(v)])

    def memorize_finish(self) -> None:
        x = np.concatenate(self.values) if self.values else np.zeros(0)
        self.x = x

    def _fit(self, degree: int) -> None:
        x = self.x
        previous, current = np.zeros_like(x), np.ones_like(x)
        self.norm2, self.alpha = [1.0, float(x.size)], []
        for _ in range(degree):
            a = float(np.sum(x * current**2) / np.sum(current**2))
            self.alpha.append(a)
            previous, current = current, (x - a) * current - (self.norm2[-1] / self.norm2[-2]) * previous
            self.norm2.append(float(np.sum(current**2)))

    def transform(self, x: Any, degree: int = 1, raw: bool = False) -> Any:
        v = np.asarray(x, dtype=np.float64)
        if not isinstance(degree, int) or degree < 1 or (not raw and degree >= np.unique(self.x).size):
            raise ValueError(f"poly: degree must be a positive integer below the number of distinct values; "
                             f"got {degree!r}")
        if raw:
            return np.column_stack([v**k for k in range(1, degree + 1)])
        if len(self.alpha) != degree:
            self._fit(degree)
        previous, current = np.zeros_like(v), np.ones_like(v)
        columns = []
        for k in range(degree):
            previous, current = current, (v - self.alpha[k]) * current - (self.norm2[k + 1] / self.norm2[k]) * previous
            columns.append(current / np.sqrt(self.norm2[k + 2]))
        return np.column_stack(columns)


def namespace() -> dict[str, Any]:
    """The functions an R formula may call, for patsy's evaluation environment."""
    return {"log": np.log, "exp": np.exp, "sqrt": np.sqrt, "log1p": np.log1p,
            "scale": patsy.stateful_transform(_Standardize), "center": patsy.stateful_transform(_Center),
            "poly": patsy.stateful_transform(_Poly)}


def _offset(x: Any) -> Any:
    """R's ``offset(z)``: the values of ``z``, one numeric column that :func:`split_offsets` takes out of the
    covariates."""
    values = np.asarray(x)
    if values.ndim != 1 or values.dtype.kind not in "biuf":
        raise ValueError(f"offset() takes one numeric column; got values of type {values.dtype}")
    return values.astype(np.float64)


def with_offset() -> dict[str, Any]:
    """:func:`namespace` with ``offset``, for the formulas whose fit adds an offset to the linear predictor."""
    return {**namespace(), "offset": _offset}


def _is_offset(term: Any) -> bool:
    return any(re.match(r"offset\(", factor.code) for factor in term.factors)


def split_offsets(info: Any, formula: str) -> tuple[Any, Any]:
    """The design of the covariates without the ``offset()`` terms, and that of the offsets (None if none).

    Both can build the columns of new data (``patsy.build_design_matrices``); the offsets' columns add up.
    An offset crossed with another term (``offset(z):x``) is refused: it has no fixed coefficient.
    """
    offsets = [term for term in info.terms if _is_offset(term)]
    if not offsets:
        return info, None
    for term in offsets:
        if len(term.factors) > 1:
            raise ValueError(f"formula {formula!r}: {plain(term.name())} crosses an offset with another term; "
                             "an offset enters alone (+ offset(z)), its coefficient fixed at 1")
    return info.subset([t for t in info.terms if not _is_offset(t)]), info.subset(offsets)


def warn_coded_numbers(formula: str, frame: Any, design_info: Any) -> None:
    """Warn for each column with 2 to 5 distinct integer codes (1, 2, 3) that enters the formula as a number."""
    for term in design_info.terms:
        for factor in term.factors:
            code = factor.code
            name = plain(code)
            if name not in getattr(frame, "columns", ()) or design_info.factor_infos[factor].type != "numerical":
                continue
            values = frame[name].dropna()
            distinct = _distinct_if_few(values.to_numpy(), 5) if values.dtype.kind in "iuf" else None
            if distinct is not None and 2 < distinct.size and np.all(distinct == np.round(distinct)) \
                    and distinct.min() >= 0:
                warnings.warn(f"formula {formula!r}: column {name!r} has {distinct.size} integer codes "
                              f"({', '.join(str(int(v)) for v in distinct)}) and enters as a number (one slope); "
                              f"write factor({name}) if it is a category", DeniableWarning, stacklevel=4)


_HEAD = 4096  # rows whose distinct values are found first


def _distinct_if_few(values: Any, most: int) -> Any:
    """The sorted distinct values of a numeric array when there are at most ``most``, else None.

    The first ``_HEAD`` rows decide a column with more (a continuous covariate) without a sort of all
    rows; otherwise every row is compared with those few values (one pass each), and only a row with
    another value makes the whole column sorted (``np.unique``)."""
    head = np.unique(values[:_HEAD])
    if head.size > most:
        return None
    if np.isin(values[_HEAD:], head).all():
        return head
    distinct = np.unique(values)
    return distinct if distinct.size <= most else None
