"""The documentation's formulas are MathML written at build time: a page needs no network to show them.

A one-page Sphinx project with the docs' math renderer is built in a temporary directory and its
output run through the same check as the full site's (docs/_scripts/check_offline.py).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
SCRIPTS = DOCS / "_scripts"

PAGE = r"""
Formulas
========

Inline :math:`P[S \ge s_{\mathrm{obs}}] = \frac12 \sum_n x_n < 1`, then displays:

.. math::
   :label: tail

   P\big[|S - \mu| \ge t\big] \le 2 \exp\!\left(-\frac{2t^2}{\sum_n k_n^2}\right)

.. math::

   a &= b + c \\
   d &= e

   f = g

See :eq:`tail`.
"""


def _assigned_literals(path: Path) -> dict:
    values = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and getattr(node, "value", None) is not None:
            try:
                values[target.id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return values


@pytest.fixture
def scripts(monkeypatch):
    """docs/_scripts importable, as docs/conf.py makes it for the real build."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    return importlib.import_module


def test_conf_renders_math_as_mathml():
    conf = _assigned_literals(DOCS / "conf.py")
    assert conf["html_math_renderer"] == "mathml"
    assert "mathml" in conf["extensions"]
    assert "sphinx.ext.mathjax" not in conf["extensions"]
    assert "mathml.css" in conf["html_css_files"]
    assert any((DOCS / static / "mathml.css").is_file() for static in conf["html_static_path"])


def _build(tmp_path: Path, page: str) -> tuple[Path, str]:
    from io import StringIO

    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["mathml"]\nhtml_math_renderer = "mathml"\n', encoding="utf-8")
    (src / "index.rst").write_text(page, encoding="utf-8")
    out = tmp_path / "html"
    warnings = StringIO()
    app = Sphinx(str(src), str(src), str(out), str(tmp_path / "doctrees"), "html", status=None, warning=warnings)
    app.build()
    return out, warnings.getvalue()


def test_built_page_has_mathml_and_loads_nothing_remote(tmp_path, scripts):
    pytest.importorskip("sphinx")
    pytest.importorskip("math_core")
    out, warnings = _build(tmp_path, PAGE)
    assert warnings == ""
    html = (out / "index.html").read_text(encoding="utf-8")
    # The inline formula, the labelled display, and the two equations of the last block.
    assert html.count("<math") == 4
    assert 'class="eqno">(1)' in html
    assert "<mtable" in html  # the aligned rows
    assert "mathjax" not in html.lower()
    assert scripts("check_offline").check(out) == []


def test_unconvertible_formula_is_a_warning(tmp_path, scripts):
    pytest.importorskip("sphinx")
    pytest.importorskip("math_core")
    out, warnings = _build(tmp_path, "Page\n====\n\n:math:`\\notacommand x`\n")
    assert "math not converted to MathML" in warnings
    problems = scripts("check_offline").check(out)
    assert any("formula left as TeX" in p for p in problems)


def test_check_flags_a_cdn_script(tmp_path, scripts):
    (tmp_path / "page.html").write_text(
        '<html><head><script defer src="https://cdn.jsdelivr.net/npm/mathjax@4/tex-mml-chtml.js"></script>'
        '<script src="_static/missing.js"></script></head>'
        '<body><span class="math notranslate nohighlight">\\(x\\)</span></body></html>',
        encoding="utf-8",
    )
    problems = scripts("check_offline").check(tmp_path)
    assert any("from the network" in p for p in problems)
    assert any("not in the build" in p for p in problems)
    assert any("left as TeX" in p for p in problems)
    assert any("no MathML formula" in p for p in problems)
