"""Per-sentence BLEU and chrF statistics (pairperm._mt, the core's mt_statistics) against
sacrebleu itself: the same integers for every sentence, and corpus scores from their sums equal
to sacrebleu's corpus_score."""

from __future__ import annotations

import gzip
import math
import random
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from pairperm._inputs import metric_value
from pairperm._metrics import BLEU_COLUMNS, CHRF_COLUMNS
from pairperm._mt import mt_statistics, read_mt

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU, CHRF  # noqa: E402

# Sentence pairs written for these tests: punctuation the 13a rules treat by its neighbours
# (numbers, dashes, periods, commas, entities), scripts without spaces, combining accents,
# letters whose lowercase depends on context or grows, astral code points, and odd whitespace.
PAIRS = [
    ("The committee approved the plan on Tuesday.", "On Tuesday, the committee approved the plan."),
    ("Prices rose by 3.5% to $1,200.50 in 2023-2024.", "Prices rose 3.5 % to $ 1,200.50 in 2023 - 2024 ."),
    ("He said: \"It's fine,\" and left...", "He said, 'it is fine', and left."),
    ("&quot;Quoted&quot; &amp;lt;tag&amp;gt; &lt;b&gt; AT&T", "\"Quoted\" <tag> <b> AT&T"),
    ("A <skipped> word and a line-\nbreak, then\nanother.", "A word and a linebreak, then another."),
    ("Die Straße ist über 5 km lang; Öl und Äpfel.", "Die Strasse ist ueber 5 km lang; Oel und Aepfel."),
    ("Le café est très bon, n'est-ce pas ?", "Le cafe\u0301 est tre\u0300s bon, n'est-ce pas?"),
    ("猫が窓の外を見ている。", "猫は窓の外を見ています。"),
    ("我们明天去北京,好吗?", "我们明天去北京，好吗？"),
    ("서울에서 부산까지 기차로 갔다.", "서울에서 부산까지 KTX로 갔어요."),
    ("ΟΔΥΣΣΕΥΣ ΚΑΙ ΑΣ", "Οδυσσευς και ας"),
    ("İstanbul ve IĞDIR", "istanbul ve ığdır"),
    ("Emoji 😀 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 text", "Emoji 😀 and Unicode text"),
    ("", "An empty hypothesis."),
    ("A hypothesis with an empty reference.", ""),
    ("   ", "   "),
    ("multiple    spaces\tand\ttabs   here  ", "multiple spaces and tabs here"),
    ("no\u00a0break\u2009thin\u3000ideographic space", "no break thin ideographic space"),
    ("zero\u200bwidth\u200bspace", "zero width space"),
    ("trailing whitespace \r\n\x0b\x0c", "trailing whitespace"),
    ("x", "x"),
    ("a a a a a a b b", "a a b b b b b b"),
    ("1.5,2.5 and .5, 5. ,5 -5 5- 5-5", "1.5 , 2.5 and .5 , 5 . , 5 -5 5 - 5-5"),
    ("(parenthesised) [bracketed] {braced} «guillemets» — dash", "(parenthesised) [bracketed] {braced} « guillemets » - dash"),
    ("e-mail: someone@example.org / http://example.org/a?b=c#d", "email someone at example.org or http://example.org/a?b=c#d"),
    ("The quick brown fox jumps over the lazy dog while the cat watches from the old wooden fence near the barn.",
     "A quick brown fox jumped over a lazy dog as the cat watched from the wooden fence by the old barn."),
]
HYPS = [h for h, _ in PAIRS]
REFS = [r for _, r in PAIRS]

# Python's whitespace (str.isspace, which split() and rstrip() use) and code points that look like it but are not.
SPACES = [chr(c) for c in range(0x3001) if chr(c).isspace()]
NOT_SPACES = ["\u200b", "\u180e", "\ufeff", "\u2060", "\u00ad"]


def sacrebleu_rows(metric: object, hyps: list, streams: list) -> np.ndarray:
    return np.array(metric._extract_corpus_statistics(hyps, streams), dtype=np.int64)  # type: ignore[attr-defined]


def sacrebleu_metric(metric: str, tokenize: str | None, lowercase: bool) -> object:
    if metric == "bleu":
        return BLEU(tokenize=tokenize or "13a", lowercase=lowercase)
    return CHRF(word_order=2 if metric == "chrf++" else 0, lowercase=lowercase)


def assert_as_sacrebleu(hyps: list, streams: list, metric: str, tokenize: str | None = None, lowercase: bool = False,
                        **options: object) -> np.ndarray:
    ours = mt_statistics(hyps, streams, metric=metric, tokenize=tokenize, lowercase=lowercase, **options)
    theirs = sacrebleu_metric(metric, tokenize, lowercase)
    expected = sacrebleu_rows(theirs, hyps, streams)
    assert ours.dtype == np.int64
    assert ours.shape == (len(hyps), {"bleu": 10, "chrf": 18, "chrf++": 24}[metric])
    bad = np.flatnonzero((ours != expected).any(axis=1))
    assert not len(bad), f"sentence {bad[0]}: {ours[bad[0]].tolist()} != sacrebleu's {expected[bad[0]].tolist()}"
    return ours


def assert_corpus_score(rows: np.ndarray, hyps: list, streams: list, metric: str, tokenize: str | None = None,
                        lowercase: bool = False) -> None:
    score = sacrebleu_metric(metric, tokenize, lowercase).corpus_score(hyps, streams).score  # type: ignore[attr-defined]
    ours = metric_value("bleu" if metric == "bleu" else "corpus_chrf", rows)
    assert ours == pytest.approx(score, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("tokenize", ["13a", "none"])
def test_bleu_equals_sacrebleu(tokenize: str, lowercase: bool) -> None:
    rows = assert_as_sacrebleu(HYPS, [REFS], "bleu", tokenize, lowercase)
    assert_corpus_score(rows, HYPS, [REFS], "bleu", tokenize, lowercase)
    assert rows[:, 2:6].sum() > 0 and (rows[:, 2:6] < rows[:, 6:10]).any()  # matches, and misses, to compare


@pytest.mark.parametrize("lowercase", [False, True])
@pytest.mark.parametrize("metric", ["chrf", "chrf++"])
def test_chrf_equals_sacrebleu(metric: str, lowercase: bool) -> None:
    rows = assert_as_sacrebleu(HYPS, [REFS], metric, lowercase=lowercase)
    assert_corpus_score(rows, HYPS, [REFS], metric, lowercase=lowercase)


def test_default_tokenizer_is_13a_and_a_single_stream_is_a_list_of_strings() -> None:
    as_stream = mt_statistics(HYPS, [REFS])
    np.testing.assert_array_equal(mt_statistics(HYPS, REFS), as_stream)
    np.testing.assert_array_equal(as_stream, sacrebleu_rows(BLEU(), HYPS, [REFS]))
    assert not np.array_equal(as_stream, mt_statistics(HYPS, REFS, tokenize="none"))


@pytest.mark.parametrize("metric", ["bleu", "chrf", "chrf++"])
def test_several_references(metric: str) -> None:
    """Three streams, with sentences that some streams lack (None): the closest reference length
    and the clipping by any one reference (BLEU), the best reference (chrF)."""
    second = [r.upper() if i % 3 else None for i, r in enumerate(REFS)]
    third = [h[: len(h) // 2] + " extra words here" if i % 4 else None for i, h in enumerate(HYPS)]
    streams = [REFS, second, third]
    for lowercase in (False, True):
        rows = assert_as_sacrebleu(HYPS, streams, metric, lowercase=lowercase)
        assert_corpus_score(rows, HYPS, streams, metric, lowercase=lowercase)


def test_bleu_closest_reference_length_takes_the_shorter_on_a_tie() -> None:
    # 5 tokens against references of 4 and 6 tokens, in both orders: sacrebleu takes 4.
    hyp = ["one two three four five"]
    for streams in ([["a b c d"], ["a b c d e f"]], [["a b c d e f"], ["a b c d"]]):
        rows = assert_as_sacrebleu(hyp, streams, "bleu")
        assert rows[0, 1] == 4


def test_bleu_clips_by_the_largest_count_in_one_reference() -> None:
    # "the" four times: once in one reference, twice in the other; clipped to 2, not 3.
    rows = assert_as_sacrebleu(["the the the the"], [["the cat"], ["the the dog"]], "bleu")
    assert rows[0, 2] == 2


@pytest.mark.parametrize("first_wins", [True, False])
def test_chrf_picks_the_reference_as_sacrebleu_on_ties_and_last_bit_differences(first_wins: bool) -> None:
    """Pairs of references whose sentence chrF ties exactly, or differs in its last bit only
    (found by search): the statistics follow the reference sacrebleu picks only if the scores
    are computed in its order of operations."""
    cases = [
        ("a bca ", " ccc a", "ccb"),      # equal scores, different statistics: the first reference
        ("c bcb", "ab", "ba  c"),         # the first scores one unit in the last place higher
        (" b   b bb", "  aab  b", "bc"),  # the second scores one unit in the last place higher
    ]
    chrf = CHRF()
    for hyp, r1, r2 in cases:
        if not first_wins:
            r1, r2 = r2, r1
        s1, s2 = chrf._extract_corpus_statistics([hyp], [[r1]])[0], chrf._extract_corpus_statistics([hyp], [[r2]])[0]
        f1, f2 = chrf._compute_f_score(s1), chrf._compute_f_score(s2)
        assert s1 != s2 and abs(f1 - f2) <= math.ulp(f1)  # still a (near) tie
        rows = assert_as_sacrebleu([hyp], [[r1], [r2]], "chrf")
        assert rows[0].tolist() == (s2 if f2 > f1 else s1)


@pytest.mark.parametrize("metric", ["bleu", "chrf", "chrf++"])
def test_whitespace_is_pythons(metric: str) -> None:
    hyps = [f"word{s}word, and{s}more{s}" for s in SPACES + NOT_SPACES]
    refs = [f"word word, and more{s}" for s in SPACES + NOT_SPACES]
    assert_as_sacrebleu(hyps, [refs], metric)


def test_no_sentences() -> None:
    assert mt_statistics([], []).shape == (0, 10)
    assert mt_statistics([], [[], []], metric="chrf++").shape == (0, 24)


def test_ordered_collections_are_taken_and_sets_refused() -> None:
    pd = pytest.importorskip("pandas")
    expected = mt_statistics(HYPS, REFS)
    for hyps, refs in ((tuple(HYPS), pd.Series(REFS)), (np.array(HYPS), np.array(REFS)),
                       (pd.Series(HYPS, index=range(len(HYPS), 0, -1)), [pd.Series(REFS), tuple(REFS)])):
        np.testing.assert_array_equal(mt_statistics(hyps, refs), expected)
    for bad in (set(HYPS), dict.fromkeys(HYPS), iter(HYPS)):
        with pytest.raises(ValueError, match="hypotheses must be a sequence of strings"):
            mt_statistics(bad, REFS)


def test_threads_and_blocks_do_not_change_the_rows() -> None:
    """Over several of the core's blocks of sentences, on one thread, two and all, and from
    Python threads at once (the GIL is released while counting)."""
    rng = random.Random(7)
    hyps = [rng.choice(HYPS) + " " + rng.choice(REFS) for _ in range(1500)]
    refs = [rng.choice(REFS) + " " + rng.choice(HYPS) for _ in range(1500)]
    for metric in ("bleu", "chrf++"):
        one = mt_statistics(hyps, refs, metric=metric, n_jobs=1)
        np.testing.assert_array_equal(mt_statistics(hyps, refs, metric=metric, n_jobs=2), one)
        np.testing.assert_array_equal(mt_statistics(hyps, refs, metric=metric), one)
        with ThreadPoolExecutor(4) as pool:
            for rows in pool.map(lambda m: mt_statistics(hyps, refs, metric=m, n_jobs=1), [metric] * 4):
                np.testing.assert_array_equal(rows, one)
    np.testing.assert_array_equal(one[:300], sacrebleu_rows(CHRF(word_order=2), hyps[:300], [refs[:300]]))


@pytest.mark.parametrize("tokenize", ["zh", "intl", "char", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200",
                                      "spBLEU-1K"])
def test_other_sacrebleu_tokenizers_are_refused(tokenize: str) -> None:
    assert tokenize in BLEU.TOKENIZERS  # still one of sacrebleu's
    with pytest.raises(ValueError, match=f"tokenizer '{tokenize}' is not reproduced here.*_extract_corpus_statistics"):
        mt_statistics(HYPS, REFS, tokenize=tokenize)


@pytest.mark.parametrize(("args", "options", "message"), [
    ((HYPS, REFS), {"tokenize": "13A"}, "tokenize must be '13a' or 'none'"),
    ((HYPS, REFS), {"metric": "chrf", "tokenize": "13a"}, "chrf counts characters and words .* no tokenizer"),
    ((HYPS, REFS), {"metric": "ter"}, "metric must be one of 'bleu', 'chrf', 'chrf\\+\\+'"),
    ((HYPS, REFS), {"lowercase": "yes"}, "lowercase must be True or False"),
    ((HYPS, REFS), {"n_jobs": 0}, "n_jobs must be None"),
    (("a sentence", ["a sentence"]), {}, "hypotheses must be a sequence of strings"),
    ((HYPS, "a reference"), {}, "references must be a sequence"),
    ((HYPS, REFS[:-1]), {}, "reference stream 0 holds 25 sentences, the hypotheses 26"),
    ((HYPS, [REFS, REFS[1:]]), {}, "reference stream 1 holds 25 sentences"),
    ((HYPS, []), {}, "references must be one string per hypothesis, or a list of reference streams"),
    ((HYPS, [REFS[0], REFS[1:]]), {}, "a mix of strings and other values"),
    ((["a", b"b"], ["a", "b"]), {}, r"hypotheses\[1\] is bytes, not a string"),
    ((["a", "b"], [["a", 2]]), {}, r"references\[0\]\[1\] is int"),
    ((["a", "b"], [["a", None], ["a", None]]), {}, "sentence 1 has no reference in any stream"),
    ((["a", "b\ud800"], ["a", "b"]), {}, "hypothesis 1 cannot be encoded as UTF-8"),
])
def test_bad_input_is_refused(args: tuple, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mt_statistics(*args, **options)


# ---------------------------------------------------------------- read_mt


def write(path, lines: list[str], end: str = "\n") -> str:
    path.write_bytes(end.join(lines).encode("utf-8") + (end.encode() if lines else b""))
    return str(path)


def test_read_mt_equals_mt_statistics(tmp_path) -> None:
    """Two systems (one gzip-compressed) against two reference files (one with CRLF line ends, which
    sacrebleu's reader also leaves in the line), every metric: sacrebleu's rows of the same lines."""
    lines = [h.replace("\n", " ") for h in HYPS]  # a line of a file cannot hold a newline
    ref_lines = [r.replace("\n", " ") for r in REFS]
    other = [h.upper() for h in lines]
    a = write(tmp_path / "a.txt", lines)
    b = tmp_path / "b.txt.gz"
    b.write_bytes(gzip.compress(("\n".join(other) + "\n").encode("utf-8")))
    r1 = write(tmp_path / "ref1.txt", ref_lines, end="\r\n")
    r2 = write(tmp_path / "ref2.txt", lines[::-1])
    ev = read_mt({"sys-a": a, "sys-b": str(b)}, [r1, r2], metrics=("bleu", "chrf", "chrf++"))
    assert ev.tasks == ("bleu", "chrf", "chrf++")
    assert ev.metrics == {"bleu": "bleu", "chrf": "corpus_chrf", "chrf++": "corpus_chrf"}
    assert ev.systems == ("sys-a", "sys-b")
    assert ev.ids["bleu"].tolist() == list(range(1, len(HYPS) + 1))
    # As sacrebleu's command line reads the files: every line rstripped.
    streams = [[r.rstrip() for r in ref_lines], [h.rstrip() for h in lines[::-1]]]
    for task in ev.tasks:
        for system, hyps in (("sys-a", lines), ("sys-b", other)):
            expected = sacrebleu_rows(sacrebleu_metric(task, None, False), [h.rstrip() for h in hyps], streams)
            np.testing.assert_array_equal(ev.scores[task][system], expected)


def test_read_mt_list_of_paths_tokenize_and_lowercase(tmp_path) -> None:
    hyp = write(tmp_path / "h.txt", ["The Cat sat.", "A DOG"])
    ref = write(tmp_path / "r.txt", ["the cat sat .", "a dog"])
    ev = read_mt([hyp], ref, metrics=["bleu"], tokenize="none", lowercase=True)
    assert ev.tasks == ("bleu",) and ev.systems == (hyp,)
    expected = sacrebleu_rows(BLEU(tokenize="none", lowercase=True), ["The Cat sat.", "A DOG"], [["the cat sat .", "a dog"]])
    np.testing.assert_array_equal(ev.scores["bleu"][hyp], expected)
    assert ev.scores["bleu"][hyp].shape == (2, len(BLEU_COLUMNS))


def test_read_mt_refuses_unequal_line_counts(tmp_path) -> None:
    hyp = write(tmp_path / "h.txt", ["one", "two", "three"])
    ref = write(tmp_path / "r.txt", ["one", "two"])
    with pytest.raises(ValueError, match=r"different numbers of lines \(.*r\.txt: 2, .*h\.txt: 3\)"):
        read_mt({"s": hyp}, ref)


def test_read_mt_names_the_line_that_is_not_utf8(tmp_path) -> None:
    ref = write(tmp_path / "r.txt", ["one", "two", "three"])
    bad = tmp_path / "h.txt"
    bad.write_bytes(b"one\ntwo\nth\xffree\n")
    with pytest.raises(ValueError, match=r"read_mt: .*h\.txt:3: not UTF-8"):
        read_mt({"s": str(bad)}, ref)


@pytest.mark.parametrize(("hyps", "options", "message"), [
    ("h.txt", {}, "hypotheses must be a mapping of system name to path"),
    (["h.txt", "h.txt"], {}, "the system file '.*h.txt' is given twice"),
    ({}, {}, "no system file"),
    (["h.txt"], {"metrics": ("bleu", "ter")}, "metrics must name some of"),
    (["h.txt"], {"metrics": ("chrf",), "tokenize": "none"}, "tokenize is BLEU's"),
    (["h.txt"], {"tokenize": "intl"}, "tokenizer 'intl' is not reproduced here"),
    (["missing.txt"], {}, "missing.txt: cannot read file"),
    (["empty.txt"], {"references": "empty.txt"}, "the files hold no lines"),
])
def test_read_mt_refuses(tmp_path, monkeypatch, hyps, options: dict, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "h.txt", ["one"])
    write(tmp_path / "r.txt", ["one"])
    write(tmp_path / "empty.txt", [])
    references = options.pop("references", "r.txt")
    with pytest.raises(ValueError, match=message):
        read_mt(hyps, references, **options)


def test_read_mt_columns_name_the_statistics(tmp_path) -> None:
    hyp = write(tmp_path / "h.txt", ["a b c"])
    ev = read_mt({"s": hyp}, hyp, metrics=("chrf", "chrf++"))
    frame = ev.to_frame()
    assert len(frame) == 2
    assert ev.scores["chrf"]["s"].shape == (1, len(CHRF_COLUMNS))
    assert ev.scores["chrf++"]["s"].shape == (1, len(CHRF_COLUMNS) + 6)


# ---------------------------------------------------------------- randomized


# Pieces the random texts are made of: the 13a rules' triggers and everything whitespace-like.
PIECES = (list("abcAB xyz019.,-'&;<>\"/()!?:@[]{}~`^_|\\$#%*+=\t\n\r\x0b\x0c") + SPACES[:12] + NOT_SPACES
          + ["&quot;", "&amp;", "&lt;", "&gt;", "<skipped>", "-\n", "猫", "が", "é", "e\u0301", "ΑΣ", "ς", "😀", "\x00", "İ",
             "ß", "  ", "1,000", "3.5", "a.b", "..", ",,", "1-2", "word", "Word"])


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40)))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_texts_equal_sacrebleu(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        n, k = rng.randint(1, 12), rng.randint(1, 3)
        hyps = [random_text(rng) for _ in range(n)]
        streams = [[random_text(rng) for _ in range(n)] for _ in range(k)]
        for stream in streams[1:]:
            for i in range(n):
                if rng.random() < 0.3:
                    stream[i] = None
        lowercase = rng.random() < 0.5
        for metric, tokenize in (("bleu", "13a"), ("bleu", "none"), ("chrf", None), ("chrf++", None)):
            assert_as_sacrebleu(hyps, streams, metric, tokenize, lowercase)


@pytest.mark.slow
def test_a_large_corpus_equals_sacrebleu() -> None:
    rng = random.Random(11)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 6))) for _ in range(300)]
    punct = [",", ".", "!", "?", ";", "3.5", "1,000", "-", "'s", "(", ")"]

    def sentence() -> str:
        return " ".join(rng.choice(words if rng.random() < 0.85 else punct) for _ in range(rng.randint(0, 45)))

    refs = [sentence() for _ in range(3000)]
    hyps = [r if rng.random() < 0.2 else sentence() for r in refs]
    for metric in ("bleu", "chrf", "chrf++"):
        rows = assert_as_sacrebleu(hyps, [refs], metric)
        assert_corpus_score(rows, hyps, [refs], metric)


@pytest.mark.slow
def test_long_segments_equal_sacrebleu() -> None:
    """Segments of tens of thousands of code points: the tables grow past their first size."""
    rng = random.Random(5)
    hyps = ["".join(rng.choice(PIECES) for _ in range(20_000)) for _ in range(2)]
    refs = [h[::-1] if i else h[5000:] + h[:5000] for i, h in enumerate(hyps)]
    for metric in ("bleu", "chrf", "chrf++"):
        assert_as_sacrebleu(hyps, [refs, hyps], metric)


def test_no_sacrebleu_is_imported_by_mt_statistics() -> None:
    # The statistics need only the compiled core; sacrebleu is the tests' reference.
    import subprocess
    code = "import sys, pairperm._mt as m; m.mt_statistics(['a b'], ['a b']); print('sacrebleu' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
