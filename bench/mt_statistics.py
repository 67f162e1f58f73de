"""Per-sentence BLEU, chrF and chrF++ statistics: sacrebleu's _extract_corpus_statistics against
pairperm's compiled counting (mt_statistics), side by side on the same corpus, with a check that
both give the same rows.

The corpus is synthetic but of MT's shape: references of 1-60 tokens (mean ~24, ~140
characters) drawn from a Zipf-like vocabulary with capitals, numbers, punctuation and some
accented words, and hypotheses that edit them (dropped, replaced and swapped words) as a system's
output would. sacrebleu's 13a tokenizer keeps an LRU cache of 2^16 lines across calls: "cold"
clears it before each run (a corpus seen for the first time), "warm" keeps it (the same corpus
scored again: every line is then a cache hit, up to 32,768 sentence pairs). Run:
    python bench/mt_statistics.py [--sizes 2000 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from typing import Callable

import numpy as np
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

from pairperm._mt import mt_statistics

PUNCTUATION = [",", ".", ";", ":", "?", "!", "(", ")", "\"", "'s", "-", "%"]


def vocabulary(rng: random.Random, size: int = 20_000) -> tuple[list[str], list[float]]:
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    accented = "éèàüöäßçñ"
    words = []
    for _ in range(size):
        w = "".join(rng.choice(letters[: rng.randint(8, 26)]) for _ in range(max(1, int(rng.gauss(5, 2.5)))))
        if rng.random() < 0.05:
            w = w[:-1] + rng.choice(accented)
        words.append(w)
    weights = [1.0 / (rank + 1) for rank in range(size)]  # Zipf: a few words make most of the text
    return words, weights


def reference(rng: random.Random, words: list[str], weights: list[float]) -> str:
    n = min(60, max(1, int(rng.gammavariate(4.0, 6.0))))
    tokens = rng.choices(words, weights, k=n)
    for i in range(n):
        u = rng.random()
        if u < 0.06:
            tokens[i] = rng.choice(PUNCTUATION)
        elif u < 0.08:
            tokens[i] = rng.choice([str(rng.randint(1, 2025)), f"{rng.randint(1, 99)}.{rng.randint(0, 9)}",
                                    f"{rng.randint(1, 9)},{rng.randint(100, 999)}"])
        elif u < 0.12:
            tokens[i] = tokens[i].capitalize()
    text = " ".join(tokens)
    return text[:1].upper() + text[1:] + rng.choice([".", ".", ".", "?", "!"])


def hypothesis(rng: random.Random, ref: str, words: list[str], weights: list[float]) -> str:
    tokens = ref.split()
    out = []
    for t in tokens:
        u = rng.random()
        if u < 0.08:
            continue  # dropped
        if u < 0.30:
            t = rng.choices(words, weights)[0]  # replaced
        out.append(t)
        if rng.random() < 0.04:
            out.append(rng.choices(words, weights)[0])  # inserted
    for _ in range(len(out) // 10):  # local reordering
        i = rng.randrange(len(out))
        j = min(len(out) - 1, i + 1)
        out[i], out[j] = out[j], out[i]
    return " ".join(out)


def corpus(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    words, weights = vocabulary(rng)
    refs = [reference(rng, words, weights) for _ in range(n)]
    return [hypothesis(rng, r, words, weights) for r in refs], refs


def clear_tokenizer_caches() -> None:
    Tokenizer13a.__call__.cache_clear()
    TokenizerRegexp.__call__.cache_clear()


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def time_case(hyps: list[str], refs: list[str], metric: str, theirs: object, cold: bool,
              repeats: int) -> tuple[float, float, float]:
    """Median seconds of sacrebleu's extraction, ours on one thread and ours on all, in turn."""
    t_theirs, t_one, t_all = [], [], []
    for _ in range(repeats):
        if cold:
            clear_tokenizer_caches()
        t_theirs.append(timed(lambda: theirs._extract_corpus_statistics(hyps, [refs])))  # type: ignore[attr-defined]
        t_one.append(timed(lambda: mt_statistics(hyps, refs, metric=metric, n_jobs=1)))
        t_all.append(timed(lambda: mt_statistics(hyps, refs, metric=metric)))
    return statistics.median(t_theirs), statistics.median(t_one), statistics.median(t_all)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"{os.cpu_count()} cores; medians of {args.repeats} runs, sacrebleu's and pairperm's in turn")
    print(f"{'N':>6} {'metric':>10} {'sacrebleu (s)':>14} {'pairperm 1 thread':>18} {'all threads':>12} "
          f"{'ratio 1 thread':>15} {'ratio all':>10}")
    for n in args.sizes:
        hyps, refs = corpus(n)
        chars = sum(map(len, hyps)) + sum(map(len, refs))
        print(f"# N = {n}: {chars / (2 * n):.0f} characters and {sum(len(r.split()) for r in refs) / n:.1f} "
              "words per reference on average")
        cases = [("bleu", "cold", BLEU()), ("bleu", "warm", BLEU()), ("chrf", "", CHRF()),
                 ("chrf++", "", CHRF(word_order=2))]
        for metric, cache, theirs in cases:
            ours = mt_statistics(hyps, refs, metric=metric, n_jobs=1)
            if not np.array_equal(ours, np.array(theirs._extract_corpus_statistics(hyps, [refs]))):
                raise SystemExit(f"{metric}: the rows differ from sacrebleu's at N = {n}")
            a, b, c = time_case(hyps, refs, metric, theirs, cache == "cold", args.repeats)
            label = f"{metric} {cache}".strip()
            print(f"{n:>6} {label:>10} {a:>14.4f} {b:>18.5f} {c:>12.5f} {a / b:>14.1f}x {a / c:>9.1f}x")


if __name__ == "__main__":
    main()
