"""Sphinx configuration for pairperm's documentation.

Build:  python -m sphinx -W --keep-going -b html docs build/docs
Tests:  python -m sphinx -W --keep-going -b doctest docs build/doctest
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# The installed package is documented (pip install ".[docs]", or an editable install).
sys.path.insert(0, str(HERE / "_scripts"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import pairperm  # noqa: E402

project = "pairperm"
author = "pairperm developers"
copyright = "pairperm developers"
release = pairperm.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "matplotlib.sphinxext.plot_directive",
    "mathml",  # docs/_scripts/mathml.py
]

exclude_patterns = ["_build", "_scripts"]
html_theme = "furo"
html_title = f"pairperm {release}"
html_static_path = ["_static"]
# Formulas become MathML when the site is built, which browsers draw themselves: the pages load
# no math script (Sphinx's default, MathJax, comes from a CDN and leaves raw TeX offline).
html_math_renderer = "mathml"
html_css_files = ["mathml.css"]

# NumPy-style docstrings.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the docstrings describe types in NumPy style

# Doctests (`-b doctest`) run every >>> block of these pages and of the docstrings they include.
# LOGS: the log fixtures of every harness the readers follow (tests/data/logs), used by the
# harness pages.
doctest_global_setup = f"""
import numpy as np
import pairperm
from pathlib import Path
np.set_printoptions(legacy=False)
LOGS = Path({str(Path(__file__).resolve().parent.parent / "tests" / "data" / "logs")!r})
"""

# Figures are drawn when the site is built; nothing rendered is committed.
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.figsize": (6.4, 3.8)}
plot_pre_code = "import numpy as np\nimport pairperm\nimport matplotlib.pyplot as plt"


def _check_api_complete(app) -> None:
    """Every name in pairperm.__all__ has an entry in api.rst (a warning, so -W fails the build)."""
    from sphinx.util import logging

    text = (HERE / "api.rst").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\.\. auto(?:function|class|data)::\s+pairperm\.(\w+)", text, flags=re.M))
    missing = sorted(set(pairperm.__all__) - documented)
    extra = sorted(documented - set(pairperm.__all__))
    log = logging.getLogger(__name__)
    if missing:
        log.warning("api.rst does not document pairperm.%s", ", pairperm.".join(missing))
    if extra:
        log.warning("api.rst documents names not in pairperm.__all__: %s", ", ".join(extra))


def _write_benchmark_tables(app) -> None:
    """The benchmark tables are the README's, extracted at build time (one source of truth)."""
    import readme_bench

    out = HERE / "_generated"
    out.mkdir(exist_ok=True)
    for name, block in readme_bench.blocks().items():
        target = out / f"{name}.txt"
        if not target.exists() or target.read_text(encoding="utf-8") != block:
            target.write_text(block, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _check_api_complete)
    app.connect("builder-inited", _write_benchmark_tables)
