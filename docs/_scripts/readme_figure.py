"""The README's one figure: the exact null distribution of the demo data with its rejection region.

    python docs/_scripts/readme_figure.py     # writes docs/_static/readme-null-distribution.png
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import pairperm  # noqa: E402
from pairperm.datasets import stanza_pos_like  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "_static" / "readme-null-distribution.png"

x, y = stanza_pos_like(300, seed=11)
result = pairperm.permutation_test(x, y)
ax = result.plot()
ax.set_title(f"N = {len(x)} sentences: exact null of S = sum(x) - sum(y)")
ax.figure.set_size_inches(6.4, 3.4)
ax.figure.savefig(OUT, bbox_inches="tight", dpi=90)
plt.close(ax.figure)
print(OUT)
