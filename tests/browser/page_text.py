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


def estimate_text(est: float, low: float, high: float, se: float, share: bool = True) -> tuple[str, str]:
    """An estimate and its interval ("low to high") as the results pages print them (format.js).

    Every number has the decimals that show two significant digits of the
    standard error (0 to 6; shares in percent), thousands separated.
    """
    scale = 100 if share else 1
    decimals = min(6, max(0, 1 - math.floor(math.log10(abs(se * scale))))) if se else 1
    unit = "%" if share else ""

    def text(x: float) -> str:
        return f"{x * scale:,.{decimals}f}{unit}"

    return text(est), f"{text(low)} to {text(high)}"
