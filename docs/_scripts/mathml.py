"""Sphinx HTML math renderer that writes MathML at build time (LaTeX converted by math-core).

Browsers render MathML natively, so a page needs no script and nothing from the network to
show its formulas: the site reads the same offline (file://) as served. A formula the
converter rejects is a warning, so a -W build fails instead of shipping raw TeX.

Select it with ``extensions = [..., "mathml"]`` and ``html_math_renderer = "mathml"``.
"""

from __future__ import annotations

import html
from typing import Any

from docutils import nodes
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

_converter = None


def _to_mathml(tex: str, *, display: bool, node: nodes.Element) -> str:
    global _converter
    # Imported here, so that builders that draw no math (doctest) run without math-core.
    from math_core import LatexError, LatexToMathML

    if _converter is None:
        # Plain-text errors: the default report is drawn with ANSI colours for a terminal.
        _converter = LatexToMathML(fancy_error=False)
    try:
        return _converter.convert_with_local_state(tex, displaystyle=display)
    except LatexError as exc:
        logger.warning("math not converted to MathML (%s): %s", exc, tex, location=node, type="mathml")
        # Still readable where warnings are not errors.
        return f'<code class="math-error">{html.escape(tex, quote=False)}</code>'


def visit_math(self: Any, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_to_mathml(node.astext(), display=False, node=node))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_math_block(self: Any, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node.get("no-wrap", node.get("nowrap", False)):
        # The author wrote the whole environment: convert it as it stands.
        self.body.append(_to_mathml(node.astext(), display=True, node=node))
        self.body.append("</div>\n")
        raise nodes.SkipNode
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    # Blank-line-separated parts are separate equations, as with Sphinx's other renderers; a part
    # with line breaks is aligned at its & marks (math-core has aligned but not split).
    for part in (p for p in node.astext().split("\n\n") if p.strip()):
        if r"\\" in part:
            part = r"\begin{aligned}" + part + r"\end{aligned}"
        self.body.append(_to_mathml(part, display=True, node=node))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app: Any) -> dict[str, Any]:
    app.add_html_math_renderer("mathml", inline_renderers=(visit_math, None), block_renderers=(visit_math_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
