"""The percentile every bench reports, kept in one place so that their figures mean the same."""

from __future__ import annotations


def pct(xs: list[float], p: float) -> float:
    """Nearest-rank percentile: a sample, never beyond the largest one; NaN for none."""
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * (len(xs) - 1))))]
