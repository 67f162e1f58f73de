"""The command line's table reader against numpy.loadtxt and pandas.read_csv: time and peak memory.

Each reader runs in a fresh process on the same file of two integer columns (the format of
`pairperm test`), which reports its wall time and the growth of its peak resident memory over
the process's size after the imports. Pandas is imported before the clock starts (the command line pays ~0.15 s for it once).
Linux only (/proc). `--before REF` also runs the reader
of a git revision (its `_files.py`, fetched with `git show`), to measure a change.

    python bench/cli_reader.py                      # 10^6 and 10^7 lines
    python bench/cli_reader.py --lines 1000000 --before main
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

# Each snippet reads the file named by argv[1] into columns; imports happen before the clock starts.
READERS = {
    "pairperm read_table": (
        "import pandas\nfrom pairperm._tables import read_table",
        "t = read_table(path, widths=(2,)); x, y = t.columns",
    ),
    "pairperm read_table, NumPy only": (
        "import sys; sys.modules['pandas'] = None\nfrom pairperm._tables import read_table",
        "t = read_table(path, widths=(2,)); x, y = t.columns",
    ),
    "numpy.loadtxt": ("import numpy as np", "a = np.loadtxt(path, delimiter=',', dtype=np.int64)"),
    "pandas.read_csv": ("import pandas as pd", "f = pd.read_csv(path, header=None)"),
}

# Linux: writing 5 to /proc/self/clear_refs resets the peak (VmHWM) to the current size, so the
# peak measured is the reader's own, not the imports'.
RUNNER = """
import sys, time
path = sys.argv[1]
{setup}
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))
base = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
t0 = time.perf_counter()
{read}
dt = time.perf_counter() - t0
print(dt, status("VmHWM:") - base)
"""


def write_file(path: Path, lines: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for start in range(0, lines, 1_000_000):
            n = min(1_000_000, lines - start)
            x = rng.integers(0, 30, n)
            y = np.maximum(0, x - rng.integers(0, 3, n))
            f.write("".join(f"{a},{b}\n" for a, b in zip(x.tolist(), y.tolist())))


def old_reader(ref: str, workdir: Path) -> tuple[str, str]:
    """The setup and read snippets of the reader at git revision `ref`."""
    source = subprocess.run(["git", "show", f"{ref}:python/pairperm/_files.py"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout
    (workdir / "old_files.py").write_text(source)
    return (f"sys.path.insert(0, {str(workdir)!r})\nimport old_files",
            "h, arr, lines = old_files.read_table(path, old_files.read_text(path), widths=(2,))")


def measure(setup: str, read: str, path: Path) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", RUNNER.format(setup=setup, read=read), str(path)], check=True,
                         capture_output=True, text=True, env=env).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--before", metavar="REF", help="also run the reader of this git revision")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        readers = dict(READERS)
        if args.before:
            readers[f"pairperm read_table at {args.before}"] = old_reader(args.before, Path(tmp))
        for lines in args.lines:
            path = Path(tmp) / f"scores-{lines}.csv"
            write_file(path, lines)
            size = path.stat().st_size
            print(f"{lines:,} lines, {size / 1e6:.1f} MB", file=sys.stderr)
            for label, (setup, read) in readers.items():
                seconds, peak = measure(setup, read, path)
                results.append({"lines": lines, "bytes": size, "reader": label, "seconds": seconds,
                                "peak_bytes": peak})
                print(f"  {label:<40} {seconds:8.3f} s  peak +{peak / 1e6:8.1f} MB  ({peak / size:.2f}x the file)",
                      file=sys.stderr)
            path.unlink()
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
