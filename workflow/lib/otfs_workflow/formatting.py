"""How the reports write names and numbers: the feature sets' display names, decimals, differences and
p-values, one function each, shared by the stages' Markdown pages and the captions."""

from __future__ import annotations

import numpy as np

__all__ = ["FEATURE_SET_NAMES", "decimals", "difference", "p_value"]

#: Display names of the feature sets (the paper's, and this project's).
FEATURE_SET_NAMES = {"surf": "SURF", "CaffeNet4096": "CaffeNet", "GoogleNet1024": "GoogleNet",
                     "EfficientNetLite0": "EfficientNet-Lite0"}


def decimals(v, digits: int = 2, missing: str = "–") -> str:
    """``v`` to ``digits`` decimals, a negative zero as zero; ``missing`` for None, NaN or an infinity."""
    return missing if v is None or not np.isfinite(v) else f"{round(float(v), digits) + 0.0:.{digits}f}"


def difference(v: float, signed: bool = True) -> str:
    """A difference in the metric's units: one decimal for points, two significant digits where it is below 0.1
    (an RMSE's differences: 0.00042, never 0.000)."""
    fmt = ("+" if signed else "") + (".1f" if abs(v) >= 0.1 or v == 0 or not np.isfinite(v) else ".2g")
    return format(v, fmt)


def p_value(p: float, style: str = "short") -> str:
    """A p-value. ``"short"``: two significant digits, "< 0.001" below it, "n/a" where undefined (the
    verdict's); ``"scientific"``: three decimals, one significant digit in scientific notation below 0.001,
    "–" where undefined (the recommendation's evaluation, whose p-values go far below 0.001)."""
    if style == "short":
        return "n/a" if not np.isfinite(p) else (f"{p:.2g}" if p >= 1e-3 else "< 0.001")
    if style == "scientific":
        return "–" if not np.isfinite(p) else (f"{p:.1e}" if p < 1e-3 else f"{p:.3f}")
    raise ValueError(f"style: 'short' or 'scientific', got {style!r}")
