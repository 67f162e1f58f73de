"""A harness's walk-through, from raw logs to the report: 30 checkpoints x 12 tasks, the logs
written in each harness's format (every record built from the repository's fixtures of that
format, so that each file holds what the tool writes), then read, compared and reported.

Tasks: five lm-evaluation-harness tasks (N = 1,172 to 4,000 documents, lines of about 1 KB as
the fixture's, 300 MB in all), one each of inspect_ai (.eval logs), HELM (per-instance stats), lighteval (parquet
details) and OpenAI evals, a TREC task (runs and qrels, nDCG@10 per topic through ir-measures),
and BLEU and chrF from plain-text translations and references (statistics counted in the core,
p-values by importance sampling). Every pair of the 30 checkpoints is compared on every task
(435 pairs a task) with 95% intervals, then reported as Markdown and JSON.

    python bench/walkthrough.py              # --repeats 3; --keep DIR keeps the generated logs
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import platform
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

import pairperm

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "data" / "logs"
N_SYSTEMS = 30
LM_EVAL_TASKS = {"arc_challenge": 1_172, "gsm8k": 1_319, "winogrande": 1_267, "hellaswag": 2_000, "mmlu": 4_000}
SMALL_N = 1_000          # inspect, HELM, OpenAI evals
LIGHTEVAL_N = 2_000
TREC_TOPICS, TREC_DEPTH = 200, 100
MT_N, MT_WORDS = 2_000, 22


def systems_of(n: int, seed: int) -> list[np.ndarray]:
    """0/1 scores of 30 checkpoints: checkpoint k takes each item from the better of two
    systems with probability k / 29 (as bench/harness.py mixes them)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n)
    a, b = truth < 0.64, truth + rng.normal(0, 0.2, n) < 0.58
    return [np.where(rng.random(n) < k / (N_SYSTEMS - 1), a, b).astype(int) for k in range(N_SYSTEMS)]


def _name(k: int) -> str:
    return f"ckpt-{k:02d}"


def write_lm_eval(root: Path) -> None:
    (template,) = [json.loads(line) for line in (next((FIXTURES / "lm_eval" / "out" / "EleutherAI__pythia-160m")
                                                      .glob("samples_boolq_*.jsonl"))).read_text().splitlines()[:1]]
    for t, (task, n) in enumerate(LM_EVAL_TASKS.items()):
        scores = systems_of(n, seed=t)
        docs = []
        for i in range(n):
            doc = dict(template["doc"], question=f"{task} question {i}", idx=i)
            docs.append((doc, hashlib.sha256(json.dumps(doc).encode()).hexdigest()))
        for k in range(N_SYSTEMS):
            folder = root / "lm_eval" / f"org__{_name(k)}"
            folder.mkdir(parents=True, exist_ok=True)
            with open(folder / f"samples_{task}_2024-12-02T10-11-12.345678.jsonl", "w") as f:
                for i, (doc, doc_hash) in enumerate(docs):
                    line = dict(template, doc_id=i, doc=doc, doc_hash=doc_hash, acc=float(scores[k][i]))
                    f.write(json.dumps(line) + "\n")


def write_inspect(root: Path) -> None:
    # The .json log of the task, whose header and first sample make the entries of each .eval.
    log = json.loads(next((FIXTURES / "inspect" / "logs").glob("*_arith_*.json")).read_text())
    sample = log.pop("samples")[0]
    header = log
    scorer = "match"
    scores = systems_of(SMALL_N, seed=20)
    folder = root / "inspect"
    folder.mkdir(parents=True)
    for k in range(N_SYSTEMS):
        head = copy.deepcopy(header)
        head["eval"]["model"] = f"org/{_name(k)}"
        head["eval"]["config"] = dict(head["eval"].get("config", {}), epochs=1)
        with zipfile.ZipFile(folder / f"2025-03-04T10-15-{k:02d}+00-00_arith_{k:022d}.eval", "w",
                             zipfile.ZIP_DEFLATED) as z:
            for i in range(SMALL_N):
                s = dict(sample, id=i, epoch=1,
                         scores={scorer: dict(sample["scores"][scorer], value="C" if scores[k][i] else "I")})
                z.writestr(f"samples/{i}_epoch_1.json", json.dumps(s))
            z.writestr("header.json", json.dumps(head))


def write_helm(root: Path) -> None:
    run = next((FIXTURES / "helm" / "benchmark_output" / "runs" / "v1").glob("civil_comments*model=openai_gpt2"))
    spec = json.loads((run / "run_spec.json").read_text())
    stat = json.loads((run / "per_instance_stats.json").read_text())[0]
    instance = json.loads((run / "instances.json").read_text())[0]
    scores = systems_of(SMALL_N, seed=21)
    for k in range(N_SYSTEMS):
        folder = root / "helm" / f"civil_comments:demographic=all,model=org_{_name(k)}"
        folder.mkdir(parents=True)
        spec_k = copy.deepcopy(spec)
        spec_k["name"] = folder.name
        spec_k["adapter_spec"]["model"] = f"org/{_name(k)}"
        (folder / "run_spec.json").write_text(json.dumps(spec_k))
        records = []
        for i in range(SMALL_N):
            v = float(scores[k][i])
            stats = [dict(s, sum=v, sum_squared=v, min=v, max=v, mean=v) for s in stat["stats"]]
            records.append(dict(stat, instance_id=f"id{i}", stats=stats))
        (folder / "per_instance_stats.json").write_text(json.dumps(records))
        (folder / "instances.json").write_text(json.dumps([dict(instance, id=f"id{i}") for i in range(SMALL_N)]))


def write_lighteval(root: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    source = next((FIXTURES / "lighteval" / "details").rglob("details_gsm8k*.parquet"))
    table = pq.read_table(source)
    template = table.slice(0, 1).to_pylist()[0]
    scores = systems_of(LIGHTEVAL_N, seed=22)
    for k in range(N_SYSTEMS):
        folder = root / "lighteval" / "details" / "org" / _name(k) / "2025-03-04T10-15-22.123456"
        folder.mkdir(parents=True)
        rows = []
        for i in range(LIGHTEVAL_N):
            doc = dict(template["doc"], id=str(i), query=f"Question {i}: " + "word " * 20)
            rows.append(dict(template, doc=doc, metric={"extractive_match": float(scores[k][i])}))
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema),
                       folder / "details_gsm8k|0_2025-03-04T10-15-22.123456.parquet")


def write_openai_evals(root: Path) -> None:
    lines = [json.loads(x) for x in next((FIXTURES / "openai_evals").glob("*_gpt-4o-mini_test-match.jsonl"))
             .read_text().splitlines()]
    spec = lines[0]
    report = next(x for x in lines if "final_report" in x)
    match = next(x for x in lines if x.get("type") == "match")
    scores = systems_of(SMALL_N, seed=23)
    folder = root / "openai_evals"
    folder.mkdir(parents=True)
    for k in range(N_SYSTEMS):
        run_id = f"2503041015{k:010d}"
        head = copy.deepcopy(spec)
        head["spec"].update(completion_fns=[_name(k)], run_id=run_id)
        with open(folder / f"{run_id}_{_name(k)}_test-match.jsonl", "w") as f:
            f.write(json.dumps(head) + "\n" + json.dumps(dict(report, run_id=run_id)) + "\n")
            for i in range(SMALL_N):
                event = dict(match, run_id=run_id, event_id=i, sample_id=f"test-match.s1.{i}",
                             data=dict(match["data"], correct=bool(scores[k][i])))
                f.write(json.dumps(event) + "\n")


def write_trec(root: Path) -> tuple[list[Path], Path]:
    rng = np.random.default_rng(24)
    folder = root / "trec"
    folder.mkdir(parents=True)
    relevance = rng.choice([0, 0, 0, 1, 2], size=(TREC_TOPICS, TREC_DEPTH))
    with open(folder / "qrels.txt", "w") as f:
        for q in range(TREC_TOPICS):
            for d in range(TREC_DEPTH // 2):
                f.write(f"{q + 301} 0 doc{q}-{d} {relevance[q, d]}\n")
    runs = []
    for k in range(N_SYSTEMS):
        path = folder / f"{_name(k)}.run"
        noise = 2.5 - 1.5 * k / (N_SYSTEMS - 1)
        with open(path, "w") as f:
            for q in range(TREC_TOPICS):
                score = relevance[q] + rng.normal(0, noise, TREC_DEPTH)
                for rank, d in enumerate(np.argsort(-score)[:TREC_DEPTH], 1):
                    f.write(f"{q + 301} Q0 doc{q}-{d} {rank} {score[d]:.4f} {_name(k)}\n")
        runs.append(path)
    return runs, folder / "qrels.txt"


def write_mt(root: Path) -> tuple[dict[str, Path], Path]:
    rng = np.random.default_rng(25)
    vocab = np.array([f"w{i}" for i in range(3_000)] + [",", ".", "'s", "(", ")"])
    refs = [" ".join(rng.choice(vocab, MT_WORDS)) for _ in range(MT_N)]
    folder = root / "mt"
    folder.mkdir(parents=True)
    (folder / "ref.txt").write_text("\n".join(refs) + "\n")
    hyps = {}
    for k in range(N_SYSTEMS):
        error = 0.45 - 0.2 * k / (N_SYSTEMS - 1)
        lines = []
        for ref in refs:
            words = ref.split()
            keep = rng.random(len(words)) >= error
            lines.append(" ".join(w if ok else str(rng.choice(vocab)) for w, ok in zip(words, keep)))
        hyps[_name(k)] = folder / f"{_name(k)}.txt"
        hyps[_name(k)].write_text("\n".join(lines) + "\n")
    return hyps, folder / "ref.txt"


def generate(root: Path) -> tuple[list[Path], Path, dict[str, Path], Path]:
    harness = root / "harness"
    for write in (write_lm_eval, write_inspect, write_helm, write_lighteval, write_openai_evals):
        write(harness)
    return (*write_trec(root), *write_mt(root))


def size_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6


def walk(root: Path, runs: list[Path], qrels: Path, hyps: dict[str, Path], ref: Path) -> dict[str, float]:
    """Every stage's wall time, read to report."""
    times = {}
    t0 = time.perf_counter()
    logs = pairperm.read_logs(root / "harness")
    times["read the harnesses' logs"] = time.perf_counter() - t0
    t = time.perf_counter()
    trec = pairperm.read_trec(runs, qrels, measure="nDCG@10")
    times["read TREC runs (ir-measures)"] = time.perf_counter() - t
    t = time.perf_counter()
    mt = pairperm.read_mt(hyps, ref)
    times["read translations (BLEU, chrF statistics)"] = time.perf_counter() - t
    evaluation = logs | trec | mt
    assert len(evaluation.tasks) == 12 and all(len(s) == N_SYSTEMS for s in evaluation.scores.values())
    t = time.perf_counter()
    exact = evaluation.select(tasks=[x for x in evaluation.tasks if x not in mt.tasks]).compare(rng=0)
    times["compare: 10 tasks with exact tests"] = time.perf_counter() - t
    for task in mt.tasks:
        t = time.perf_counter()
        evaluation.select(tasks=[task]).compare(rng=0)
        times[f"compare: {task} (importance sampling)"] = time.perf_counter() - t
    t = time.perf_counter()
    exact.to_markdown()
    exact.to_json()
    times["report (Markdown, JSON)"] = time.perf_counter() - t
    times["total"] = time.perf_counter() - t0
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="write the logs here and keep them")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="pairperm-walkthrough-"))
    t = time.perf_counter()
    paths = generate(root)
    print(f"# pairperm {pairperm.__version__}, Python {platform.python_version()}, {os.cpu_count()} cores")
    print(f"generated {size_mb(root):.0f} MB of logs in {time.perf_counter() - t:.0f} s "
          f"(lm-eval {size_mb(root / 'harness' / 'lm_eval'):.0f} MB) under {root}")
    runs = [walk(root, *paths) for _ in range(args.repeats)]
    print(f"\nwall seconds, median of {args.repeats} (min-max):")
    for stage in runs[0]:
        values = sorted(r[stage] for r in runs)
        print(f"  {stage:<45} {np.median(values):7.2f}  ({values[0]:.2f}-{values[-1]:.2f})")


if __name__ == "__main__":
    main()
