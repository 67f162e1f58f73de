"""JSON lines read at what speed: orjson per line, the json module, pyarrow.json and
pandas.read_json against pairperm's readers, on a generated lm-eval-like sample log.

The file has lm-evaluation-harness's sample lines (a multiple-choice task: a long passage in
``doc``, the prompt repeated in each of four ``arguments``, ``resps``, hashes, ``acc`` and
``acc_norm``), about 12 KB a line. Each reader takes the doc ids and one score (and, where it
can, only them); MB/s is the file's size over the median wall time (bench/timing.py). The
heterogeneous variant changes one line in a thousand the way logs do (a document field that is
a number in one line and text in another), where pyarrow's type inference stops.

    python bench/jsonl_read.py                 # 100 MB
    python bench/jsonl_read.py --mb 20 --repeats 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_seconds  # noqa: E402

WORDS = ("the of and to in is was for on that with as by at from his her an were are which this be or has had not but "
         "river city king war music school water light year people").split()


def write_log(path: Path, megabytes: float, heterogeneous: bool, seed: int = 0) -> int:
    """An lm-eval-like samples file of about `megabytes`; returns its number of lines."""
    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    size, i = 0, 0
    with open(path, "w", encoding="utf-8") as f:
        while size < megabytes * 1e6:
            passage, question = text(rng.randint(200, 900)), text(20)
            label: Any = rng.randint(0, 3)
            if heterogeneous and i % 1000 == 999:
                label = str(label)  # as a dataset with a mistyped row writes it
            doc = {"article": passage, "question": question, "options": [text(5) for _ in range(4)], "label": label}
            prompt = f"Article: {passage}\nQuestion: {question}\nAnswer:"
            lls = [-rng.random() * 20 for _ in range(4)]
            line = {
                "doc_id": i, "doc": doc, "target": str(label),
                "arguments": {f"gen_args_{k}": {"arg_0": prompt, "arg_1": " " + doc["options"][k]} for k in range(4)},
                "resps": [[[str(ll), "False"]] for ll in lls], "filtered_resps": [[str(ll), "False"] for ll in lls],
                "filter": "none", "metrics": ["acc", "acc_norm"],
                "doc_hash": hashlib.sha256(json.dumps(doc, indent=2).encode()).hexdigest(),
                "prompt_hash": hashlib.sha256(prompt.encode()).hexdigest(),
                "target_hash": hashlib.sha256(str(label).encode()).hexdigest(),
                "acc": float(rng.random() < 0.5), "acc_norm": float(rng.random() < 0.5),
            }
            s = json.dumps(line, ensure_ascii=False) + "\n"
            f.write(s)
            size += len(s.encode("utf-8"))
            i += 1
    return i


def readers(path: Path) -> dict[str, Callable[[], object]]:
    import orjson
    import pandas as pd
    import pyarrow as pa
    import pyarrow.json as pj

    from pairperm._fields import FieldPath, iter_jsonl, read_jsonl_logs, take
    from pairperm._lm_eval import read_lm_eval
    from pairperm._tables import Source

    def per_line(loads: Callable[[bytes], Any]) -> Callable[[], object]:
        def read() -> object:
            ids, scores = [], []
            with open(path, "rb") as f:
                for raw in f:
                    r = loads(raw)
                    ids.append(r["doc_id"])
                    scores.append(r["acc"])
            return ids, scores
        return read

    needed = pa.schema([("doc_id", pa.int64()), ("acc", pa.float64()), ("doc_hash", pa.string()),
                        ("target_hash", pa.string()), ("filter", pa.string())])
    fields = [FieldPath("doc_id"), FieldPath("acc")]

    def pairperm_lines() -> object:
        return [take(fields, r, raw, "x", n) for n, raw, r in iter_jsonl(Source(str(path), None))]

    return {
        "orjson per line": per_line(orjson.loads),
        "json module per line": per_line(json.loads),
        "pyarrow.json, every field": lambda: pj.read_json(path),
        "pyarrow.json, 5 fields": lambda: pj.read_json(path, parse_options=pj.ParseOptions(
            explicit_schema=needed, unexpected_field_behavior="ignore")),
        "pandas.read_json(lines=True)": lambda: pd.read_json(path, lines=True, dtype=False),
        "pairperm iter_jsonl + fields": pairperm_lines,
        "pairperm read_jsonl_logs": lambda: read_jsonl_logs({"a": path}, id_field="doc_id", score_field="acc"),
        "pairperm read_lm_eval": lambda: read_lm_eval(path.parent, metric="acc"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=100.0, help="size of the generated file (default 100 MB)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for heterogeneous in (False, True):
            model = Path(tmp) / ("mixed" if heterogeneous else "plain") / "org__model"
            model.mkdir(parents=True)
            path = model / "samples_race_2024-12-02T10-11-12.345678.jsonl"
            lines = write_log(path, args.mb, heterogeneous)
            size = path.stat().st_size
            print(f"{'heterogeneous' if heterogeneous else 'homogeneous'}: {lines:,} lines, {size / 1e6:.1f} MB "
                  f"({size / lines / 1e3:.1f} KB a line)")
            for name, read in readers(path).items():
                try:
                    seconds = median_seconds(read, args.repeats)
                except Exception as exc:  # pyarrow's refusal of a changed type is the point of the second file
                    print(f"  {name:<32} fails: {type(exc).__name__}: {str(exc).splitlines()[0][:90]}")
                    results.append({"file": "mixed" if heterogeneous else "plain", "reader": name, "error": str(exc)})
                    continue
                print(f"  {name:<32} {size / seconds / 1e6:8.0f} MB/s  ({seconds:.3f} s)")
                results.append({"file": "mixed" if heterogeneous else "plain", "reader": name, "bytes": size,
                                "seconds": seconds})
    if args.json:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
