"""The shuffled guarantee of the results is computed once per grid point, and never while a read waits.

:class:`deniable.server._shuffled.Ahead` (one per service) states the exact
bound the first time; when the count has reached a grid point whose value is
not computed yet, it states its previous bound again (for fewer responses:
valid and looser) and computes the new one in the background, stated as soon
as it is ready. Each test uses an epsilon of its own: the values are kept per
process.
"""

from __future__ import annotations

import time

import deniable as dn
from deniable.server._shuffled import Ahead, bound, grid_point


def _wait_until_exact(ahead: Ahead, epsilon0: float, n: int, exact: tuple[float, float]) -> None:
    deadline = time.monotonic() + 120
    while ahead.bound(epsilon0, n) != exact:
        assert time.monotonic() < deadline, "the background computation never finished"
        time.sleep(0.05)


def test_grid_point_rounds_down_to_two_significant_digits() -> None:
    assert grid_point(12_345) == (12_000, 1e-6)
    assert grid_point(99) == (99, 1e-6)
    assert grid_point(4_567_890) == (4_500_000, 4_500_000 ** -1.1)


def test_first_statement_is_exact_then_a_new_value_is_computed_in_the_background() -> None:
    epsilon0 = 1.2345
    ahead = Ahead()
    first = ahead.bound(epsilon0, 1_234)
    assert first == (dn.shuffle_epsilon(epsilon0, 1_200, 1e-6), 1e-6)
    assert ahead.bound(epsilon0, 1_299) == first  # the same grid point

    # 3.4 million responses: a value that takes about a second to compute is not waited for
    stale = ahead.bound(epsilon0, 3_456_789)
    assert stale == first
    exact = (dn.shuffle_epsilon(epsilon0, 3_400_000, 3_400_000 ** -1.1), 3_400_000 ** -1.1)
    assert exact[0] < stale[0] and exact[1] < stale[1]  # the earlier statement is looser, so it holds
    _wait_until_exact(ahead, epsilon0, 3_456_789, exact)
    assert bound(epsilon0, 3_456_789) == exact

    # a fresh service (another process would be one) states the exact value at once
    assert Ahead().bound(epsilon0, 3_456_789) == exact


def test_a_statement_never_goes_back_to_fewer_responses() -> None:
    epsilon0 = 1.3579
    ahead = Ahead()
    big = ahead.bound(epsilon0, 50_000)
    assert ahead.bound(epsilon0, 2_000) == (dn.shuffle_epsilon(epsilon0, 2_000, 1e-6), 1e-6)  # computed here
    assert ahead.bound(epsilon0, 50_000) == big
