"""Child interpreters that import the same pairperm as the tests, whatever their working
directory or environment would find first."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pairperm
from pairperm import _core

# The directory holding the tests' pairperm package (the one with its compiled core).
PACKAGE_PARENT = str(Path(_core.__file__).resolve().parent.parent)


def prologue() -> str:
    """Source a child runs first: the tests' package first on sys.path, and a check that it is
    the one imported (the child fails with an AssertionError otherwise)."""
    files = (pairperm.__file__, _core.__file__)
    return (f"import sys\nsys.path.insert(0, {PACKAGE_PARENT!r})\nimport pairperm, pairperm._core\n"
            f"assert (pairperm.__file__, pairperm._core.__file__) == {files!r}, "
            "(pairperm.__file__, pairperm._core.__file__)\n")


def python_command(body: str, *args: str) -> list[str]:
    """`python -c BODY ARGS` after the prologue."""
    return [sys.executable, "-c", prologue() + textwrap.dedent(body), *args]


def module_command(*args: str) -> list[str]:
    """`python -m pairperm ARGS` after the prologue: runpy runs the package's __main__ as -m does
    (sys.argv[0] the module's file, sys.argv[1:] the arguments)."""
    return python_command("import runpy\nrunpy.run_module('pairperm', run_name='__main__', alter_sys=True)\n", *args)
