"""Runtime against N of every method in the README's benchmark table (drawn at docs build time)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import readme_bench


def draw(ax=None):
    if ax is None:
        ax = plt.subplots(figsize=(6.4, 4.2))[1]
    sizes, table = readme_bench.timings()
    for i, (method, seconds) in enumerate(table.items()):
        y = np.asarray(seconds)
        ok = np.isfinite(y)
        style = "-" if not method.startswith("numpy") else ":"
        ax.loglog(np.asarray(sizes)[ok], y[ok], style, marker="o", color=f"C{i}", label=method,
                  linewidth=2.5 if method == "auto" else 1.3)
    ax.set_xlabel("N (entries)")
    ax.set_ylabel("median seconds per call")
    ax.set_title("two-sided paired-permutation test, POS-tagging-like data")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    return ax
