"""Categorical domains: the ordered categories a frequency oracle reports on."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.errors import CategoryError

__all__ = ["Domain"]

_JSON_SCALARS = (str, int, float, bool)


class Domain:
    """An ordered, duplicate-free tuple of hashable categories.

    ``Domain(10)`` is the integer range ``0..9``; any other iterable lists
    the categories (strings, ints, bools, ...). Values are mapped to their
    positions (``encode``) with numpy, and positions back to values
    (``decode``).

    Parameters
    ----------
    categories : int or iterable of hashable
        ``k`` (the ints ``0 .. k-1``) or the categories, distinct, at least 2.
    owner : str, default "mechanism"
        The name used in error messages (the mechanism being built).

    Raises
    ------
    ValueError
        Fewer than two categories, or repeated ones.
    TypeError
        ``categories`` is a bool, a string or not iterable, or a category is
        unhashable or NaN.
    CategoryError
        From ``encode``: a value that is not a category.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import Domain
    >>> d = Domain(["a", "b", "c"])
    >>> d.k, d.encode(["c", "a"]).tolist(), d.decode(np.array([1, 2])).tolist()
    (3, [2, 0], ['b', 'c'])
    >>> Domain(4), Domain(4).to_json()
    (Domain(4), 4)
    """

    def __init__(self, categories: int | Iterable[Hashable], owner: str = "mechanism") -> None:
        self.owner = owner
        if isinstance(categories, (bool, np.bool_)):
            raise TypeError(
                f"domain for {owner} must be an int k >= 2 or a sequence of categories; "
                f"got {categories!r}"
            )
        if isinstance(categories, (int, np.integer)):
            k = int(categories)
            if k < 2:
                raise ValueError(f"domain size k must be >= 2 for {owner}; got {k}")
            self.values: tuple[Hashable, ...] = tuple(range(k))
            self.is_range = True
        else:
            if isinstance(categories, (str, bytes)) or not isinstance(categories, Iterable):
                raise TypeError(
                    f"domain for {owner} must be an int k >= 2 or a sequence of categories; "
                    f"got {categories!r}"
                )
            values = tuple(v.item() if isinstance(v, np.generic) else v for v in categories)
            if len(values) < 2:
                raise ValueError(
                    f"domain for {owner} needs at least 2 categories; got {list(values)!r}"
                )
            for v in values:
                if not isinstance(v, Hashable) or (isinstance(v, float) and v != v):
                    raise TypeError(f"category {v!r} of {owner} is not a usable category")
            seen: dict[Any, Any] = {}
            for v in values:
                key = (type(v) is bool, v)
                if key in seen:
                    raise ValueError(f"domain for {owner} has duplicate category {v!r}")
                seen[key] = v
            self.values = values
            self.is_range = values == tuple(range(len(values))) and all(
                type(v) is int for v in values
            )
        self.k = len(self.values)
        self.is_bool = self.values == (False, True) and all(type(v) is bool for v in self.values)
        # keyed like the duplicate check: True and 1 are different categories
        self._index = {(type(v) is bool, v): i for i, v in enumerate(self.values)}
        self._str_sorted: NDArray[np.str_] | None = None
        self._str_order: NDArray[np.int64] | None = None
        if all(isinstance(v, str) for v in self.values):
            arr = np.array(self.values, dtype=str)
            order = np.argsort(arr, kind="stable")
            self._str_sorted = arr[order]
            self._str_order = order.astype(np.int64)

    # ------------------------------------------------------------------ encode
    def _not_in(self, value: object, index: int | None = None) -> CategoryError:
        message = f"value {value!r} is not in the domain of {self.owner}: {self.describe()}"
        return CategoryError(message, value, index)

    def describe(self) -> str:
        if self.is_range:
            return f"integers 0..{self.k - 1}"
        shown = ", ".join(repr(v) for v in self.values[:12])
        more = f", ... ({self.k} in all)" if self.k > 12 else ""
        return f"[{shown}{more}]"

    def encode_one(self, value: object) -> int:
        """Position of one value; :class:`CategoryError` naming the value if it is not a category."""
        if isinstance(value, np.generic):
            value = value.item()
        if self.is_range:
            if type(value) is int and 0 <= value < self.k:
                return value
            raise self._not_in(value)
        if self.is_bool and type(value) is not bool:
            raise self._not_in(value)
        try:
            i = self._index.get((type(value) is bool, value))
        except TypeError:
            raise self._not_in(value) from None
        if i is None:
            raise self._not_in(value)
        return i

    def encode(self, values: Sequence[Any] | NDArray[Any]) -> NDArray[np.int64]:
        """Positions of many values (vectorized for int ranges, bools and strings).

        A value that is not a category raises :class:`CategoryError` naming
        the first such value and its position (``index``) in ``values``.
        """
        try:
            arr = np.asarray(values)
        except ValueError:  # ragged nesting
            raise ValueError(f"values for {self.owner} must be a 1-D sequence of categories") from None
        if arr.ndim != 1:
            if arr.ndim == 0:
                raise ValueError(f"values for {self.owner} must be a 1-D sequence; got a scalar")
            raise ValueError(f"values for {self.owner} must be 1-D; got shape {arr.shape}")
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        kind = arr.dtype.kind
        if self.is_range and kind in "iu":
            # one pass: a negative value read as unsigned is at least 2**(bits - 1), so above any k
            if arr.view(f"u{arr.dtype.itemsize}").max() >= self.k:
                i = int(np.flatnonzero((arr < 0) | (arr >= self.k))[0])
                raise self._not_in(arr[i].item(), i)
            return arr.astype(np.int64, copy=False)
        if self.is_bool and kind == "b":
            return arr.astype(np.int64)
        if self._str_sorted is not None and kind == "U":
            pos = np.searchsorted(self._str_sorted, arr)
            np.minimum(pos, self.k - 1, out=pos)
            ok = self._str_sorted[pos] == arr
            if not ok.all():
                i = int(np.flatnonzero(~ok)[0])
                raise self._not_in(str(arr[i]), i)
            assert self._str_order is not None
            return self._str_order[pos]
        # mixed-type domains: look up the caller's own objects, since np.asarray
        # coerces a mixed list (1 and "1", True and 1) to one dtype
        items = arr.tolist() if isinstance(values, np.ndarray) else list(values)
        positions = np.empty(arr.size, dtype=np.int64)
        for i, value in enumerate(items):
            try:
                positions[i] = self.encode_one(value)
            except CategoryError as exc:
                exc.index = i
                raise
        return positions

    # ------------------------------------------------------------------ decode
    def decode(self, indices: NDArray[np.integer]) -> NDArray[Any]:
        """Values at the given positions, as a numpy array."""
        idx = np.asarray(indices, dtype=np.int64)
        if self.is_range:
            return idx
        if self.is_bool:
            return idx.astype(bool)
        return self.array[idx]

    @property
    def array(self) -> NDArray[Any]:
        if self._str_sorted is not None:
            return np.array(self.values, dtype=str)
        if all(type(v) is int for v in self.values):
            return np.array(self.values, dtype=np.int64)
        out = np.empty(self.k, dtype=object)
        out[:] = list(self.values)
        return out

    # ------------------------------------------------------------------ wire
    def to_json(self) -> int | list[Any]:
        if self.is_range:
            return self.k
        for v in self.values:
            if not isinstance(v, _JSON_SCALARS):
                raise TypeError(
                    f"category {v!r} of {self.owner} cannot be written to JSON; "
                    "use str, int, float or bool categories"
                )
        return list(self.values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Domain) and [(type(v) is bool, v) for v in self.values] == [
            (type(v) is bool, v) for v in other.values
        ]

    def __hash__(self) -> int:
        return hash(self.values)

    def __repr__(self) -> str:
        return f"Domain({self.k if self.is_range else list(self.values)!r})"
