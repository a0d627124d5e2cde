"""What the survey page tells a respondent about epsilon, checked against the numbers."""

from __future__ import annotations

import math


def assert_odds_sentence(privacy: str, epsilon: float) -> None:
    """The page's plain-language statement of ``epsilon``: any answer at most e^epsilon times more
    likely than another, compared with before; from even odds, at most e^eps / (1 + e^eps) sure;
    and what is not protected."""
    factor = math.exp(epsilon)
    sure = factor / (1 + factor)
    assert f"at most eε = {float(f'{factor:.3g}'):g} times more likely, compared with any other" in privacy
    expected = "more than 99.9%" if sure > 0.999 else f"{float(f'{100 * sure:.3g}'):g}%"
    assert f"they can be at most {expected} sure which one is yours afterwards" in privacy
    assert "Not protected: your network address, when you answer, and that you took part." in privacy
    assert "nobody" not in privacy
