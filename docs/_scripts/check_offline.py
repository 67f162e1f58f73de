"""Check a built HTML site for formulas that need the network: python check_offline.py BUILD_DIR.

Fails (exit 1, one line per problem) when a page
  * loads a script, stylesheet or other resource from another host (http:, https: or //), such
    as MathJax from a CDN, which an offline reader never gets;
  * refers to a local script or stylesheet that is not in the build;
  * still holds math as TeX: every formula must have been written out as MathML at build time.
A site with no formula at all also fails, since the math renderer was then never exercised.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

# Attributes through which a page makes the browser fetch something (a plain <a href> does not).
_FETCHED = {
    ("script", "src"),
    ("img", "src"),
    ("iframe", "src"),
    ("source", "src"),
    ("audio", "src"),
    ("video", "src"),
    ("embed", "src"),
    ("object", "data"),
}
_LINK_RELS_FETCHED = {"stylesheet", "preload", "modulepreload", "icon", "prefetch"}
# HTML elements without an end tag: they must not deepen the nesting count of a math container.
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fetched: list[str] = []
        self.math_elements = 0
        self.tex_in_math: list[str] = []
        # Inside a span/div of class "math": open-element depth, whether MathML was seen, its text.
        self._depth = 0
        self._has_mathml = False
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, opens=tag not in _VOID)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, opens=False)

    def _start(self, tag: str, attrs: list[tuple[str, str | None]], *, opens: bool) -> None:
        values = {name: value or "" for name, value in attrs}
        for name, value in attrs:
            if (tag, name) in _FETCHED and value:
                self.fetched.append(value)
        if tag == "link" and values.get("href") and _LINK_RELS_FETCHED & set(values.get("rel", "").lower().split()):
            self.fetched.append(values["href"])
        if tag == "math":
            self.math_elements += 1
            self._has_mathml = True
        if self._depth:
            self._depth += opens
        elif opens and tag in ("span", "div") and "math" in values.get("class", "").split():
            self._depth, self._has_mathml, self._text = 1, False, []

    def handle_endtag(self, tag: str) -> None:
        if self._depth:
            self._depth -= 1
            if self._depth == 0 and not self._has_mathml:
                self.tex_in_math.append("".join(self._text).strip()[:80])

    def handle_data(self, data: str) -> None:
        if self._depth:
            self._text.append(data)


def check(site: Path) -> list[str]:
    problems: list[str] = []
    pages = sorted(site.rglob("*.html"))
    if not pages:
        return [f"{site}: no HTML pages"]
    total_math = 0
    for page in pages:
        name = page.relative_to(site).as_posix()
        parser = _Page()
        parser.feed(page.read_text(encoding="utf-8"))
        parser.close()
        total_math += parser.math_elements
        for ref in parser.fetched:
            parts = urlsplit(ref)
            if parts.scheme in ("http", "https") or (not parts.scheme and parts.netloc):
                problems.append(f"{name}: loads {ref} from the network")
            elif not parts.scheme and parts.path and not (page.parent / unquote(parts.path)).is_file():
                problems.append(f"{name}: refers to {ref}, which is not in the build")
        for tex in parser.tex_in_math:
            problems.append(f"{name}: formula left as TeX, not MathML: {tex!r}")
    if total_math == 0:
        problems.append(f"{site}: no MathML formula in any page")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(Path(argv[1]))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
