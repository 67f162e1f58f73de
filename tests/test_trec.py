"""TREC runs and qrels evaluated as trec_eval -q -c evaluates them, and trec_eval -q output read
by topic id: the values are pytrec_eval's and ir-measures' own, and every bad line is named."""

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")
ir_measures = pytest.importorskip("ir_measures")
pytrec_eval = pytest.importorskip("pytrec_eval")

from pairperm._records import Evaluation  # noqa: E402
from pairperm._trec import read_trec, read_trec_eval_q, trec_eval_q_records, trec_records  # noqa: E402

DATA = Path(__file__).parent / "data" / "logs" / "trec"
RUNS = [DATA / "bm25.run", DATA / "dense.run", DATA / "rerank.run"]
QRELS = DATA / "qrels.txt"
Q_FILES = [DATA / "bm25.q", DATA / "dense.q", DATA / "rerank.q"]
# ir-measures' names and trec_eval's for the same measures.
PAIRS = {"nDCG@10": "ndcg_cut_10", "AP": "map", "RR": "recip_rank", "P@5": "P_5"}


def _split_lines(path):
    return [line.split() for line in Path(path).read_text().splitlines() if line.strip()]


def _judged():
    qrels = {}
    for qid, _, docno, rel in _split_lines(QRELS):
        qrels.setdefault(qid, {})[docno] = int(rel)
    return qrels


def _by_topic(ev, task, system):
    return dict(zip(ev.ids[task], ev.scores[task][system].tolist()))


def test_values_are_pytrec_evals_own_and_a_judged_topic_the_run_lacks_scores_0():
    ev = read_trec(RUNS, QRELS, measure=list(PAIRS))
    assert isinstance(ev, Evaluation)
    assert ev.systems == ("bm25", "dense-v1", "rerank")
    qrels = _judged()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recip_rank", "P.5"})
    for path, system in zip(RUNS, ev.systems):
        run = {}
        for qid, _, docno, _, score, _ in _split_lines(path):
            run.setdefault(qid, {})[docno] = float(score)
        expected = evaluator.evaluate(run)
        for measure, name in PAIRS.items():
            got = _by_topic(ev, measure, system)
            # The topics are the judged ones: bm25's topic 310 is not judged, and trec_eval drops it.
            assert sorted(got) == sorted(qrels)
            for qid in qrels:
                # trec_eval -c scores a judged topic the run lacks (dense has no 304) on an empty ranking.
                want = expected[qid][name] if qid in run else 0.0
                assert got[qid] == pytest.approx(want, abs=1e-12), (system, measure, qid)
    assert "304" not in {line[0] for line in _split_lines(RUNS[1])}
    assert all(_by_topic(ev, m, "dense-v1")["304"] == 0.0 for m in PAIRS)
    assert any(_by_topic(ev, m, "bm25")["304"] > 0 for m in PAIRS)
    assert ev.metrics == {"nDCG@10": "ndcg", "AP": "ap", "RR": "rr", "P@5": "mean"}


def test_values_equal_ir_measures_on_its_own_reading_of_the_files():
    measures = [ir_measures.parse_measure(m) for m in ("nDCG@10", "AP", "R@5")]
    ev = read_trec(RUNS, QRELS, measure=measures)
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    for path, system in zip(RUNS, ev.systems):
        expected = {(str(m.measure), m.query_id): m.value
                    for m in ir_measures.iter_calc(measures, qrels, list(ir_measures.read_trec_run(str(path))))}
        for m in measures:
            got = _by_topic(ev, str(m), system)
            assert {q: v for q, v in got.items() if (str(m), q) in expected} == pytest.approx(
                {q: expected[str(m), q] for q in got if (str(m), q) in expected}, abs=1e-12)
            # Only a topic the run lacks is filled in, with 0.
            assert all(v == 0.0 for q, v in got.items() if (str(m), q) not in expected)
    assert ev.metrics["R@5"] == "mean"


def test_trec_eval_q_output_equals_the_runs_evaluated_per_topic():
    runs = read_trec(RUNS, QRELS, measure=list(PAIRS))
    printed = read_trec_eval_q(Q_FILES, measure=list(PAIRS.values()))
    assert printed.systems == runs.systems  # the runid lines name them as the runs' tags do
    assert printed.metrics == {"ndcg_cut_10": "ndcg", "map": "ap", "recip_rank": "rr", "P_5": "mean"}
    for measure, name in PAIRS.items():
        for system in runs.systems:
            full, rounded = _by_topic(runs, measure, system), _by_topic(printed, name, system)
            assert full.keys() == rounded.keys()
            # trec_eval prints 4 decimals.
            assert all(abs(full[q] - rounded[q]) <= 5e-5 + 1e-12 for q in full), (measure, system)


def test_trec_eval_q_is_read_by_topic_id_not_by_line_order(tmp_path):
    lines = (DATA / "dense.q").read_text().splitlines(keepends=True)
    shuffled = tmp_path / "dense.q"
    shuffled.write_text("".join(np.random.default_rng(3).permutation(lines)))
    files = [Q_FILES[0], shuffled, Q_FILES[2]]
    assert read_trec_eval_q(files, measure=["map", "P_5"]) == read_trec_eval_q(Q_FILES, measure=["map", "P_5"])


def _edited(tmp_path, source, old, new, name=None):
    text = Path(source).read_text()
    assert old in text
    path = tmp_path / (name or Path(source).name)
    path.write_text(text.replace(old, new, 1))
    return path


def test_trec_eval_q_summary_lines_are_checked(tmp_path):
    # A topic's value changed: the mean of the topics is no longer the summary's.
    changed = _edited(tmp_path, DATA / "bm25.q", "map                   \t302\t0.", "map                   \t302\t9.")
    with pytest.raises(ValueError, match=r"bm25\.q:\d+: the summary of 'map' .* mean of its 5 topics"):
        read_trec_eval_q([changed, Q_FILES[1]], measure="map")
    # Counts are summed: their summary must be the exact sum.
    changed = _edited(tmp_path, DATA / "rerank.q", "num_ret               \t303\t8", "num_ret               \t303\t7")
    with pytest.raises(ValueError, match=r"rerank\.q:\d+: the summary of 'num_ret' is 40, but its 5 topics sum to 39"):
        read_trec_eval_q([Q_FILES[0], changed], measure="num_ret")
    # A topic's lines lost (a truncated or edited output) disagree with the summary.
    lines = [x for x in (DATA / "bm25.q").read_text().splitlines(keepends=True) if "\t302\t" not in x]
    cut = tmp_path / "cut.q"
    cut.write_text("".join(lines))
    with pytest.raises(ValueError, match=r"cut\.q:\d+: the summary of 'ndcg_cut_10'"):
        read_trec_eval_q([cut, Q_FILES[1]], measure="ndcg_cut_10")


def test_trec_eval_q_files_of_different_topics_are_refused_naming_them(tmp_path):
    # Without the summary lines nothing disagrees within the file; the topics differ between files.
    lines = [x for x in (DATA / "dense.q").read_text().splitlines(keepends=True)
             if "\t304\t" not in x and "\tall\t" not in x]
    no_c = tmp_path / "dense.q"
    no_c.write_text("".join(lines))
    with pytest.raises(ValueError, match=r"bm25\.q and .*dense\.q score different topics on 'map': only in the first "
                                         r"'304'; only in the second none"):
        read_trec_eval_q([Q_FILES[0], no_c], measure="map")


def test_trec_eval_q_bad_input_names_file_and_line(tmp_path):
    bad = _edited(tmp_path, DATA / "bm25.q", "P_5                   \t303\t0.", "P_5                   \t303\tx0.")
    with pytest.raises(ValueError, match=r"bm25\.q:20: the value 'x0\.\d+' of 'P_5' is not a decimal number"):
        read_trec_eval_q([bad, Q_FILES[1]], measure="P_5")
    short = _edited(tmp_path, DATA / "bm25.q", "map                   \t301\t", "map                   \t", "short.q")
    with pytest.raises(ValueError, match=r"short\.q:4: expected 3 fields \(measure qid value\); got 2"):
        read_trec_eval_q([short, Q_FILES[1]], measure="map")
    twice = tmp_path / "twice.q"
    twice.write_text((DATA / "bm25.q").read_text().replace("\t302\t", "\t301\t"))
    with pytest.raises(ValueError, match=r"twice\.q:8: topic '301' has a second 'num_ret' \(first at line 1\)"):
        read_trec_eval_q([twice, Q_FILES[1]], measure="num_ret")
    with pytest.raises(ValueError, match=r"bm25\.q: no measure 'ndcg' \(the file's measures: 'num_ret', 'num_rel'"):
        read_trec_eval_q(Q_FILES, measure="ndcg")
    with pytest.raises(ValueError, match=r"no per-topic value of 'num_q'"):
        read_trec_eval_q(Q_FILES, measure="num_q")


def test_system_names_come_from_systems_then_tags_then_file_names(tmp_path):
    ev = read_trec(None, QRELS, measure="AP", systems={"lexical": RUNS[0], "neural": RUNS[1]})
    assert ev.systems == ("lexical", "neural")
    assert ev.scores["AP"]["neural"].tolist() == read_trec(RUNS[1:2], QRELS, measure="AP").scores["AP"]["dense-v1"].tolist()
    # A run whose lines carry several tags is named after its file.
    mixed = tmp_path / "fusion.txt"
    mixed.write_text(RUNS[2].read_text().replace("rerank\n", "rerank-b\n", 3))
    assert read_trec([RUNS[0], mixed], QRELS, measure="AP").systems == ("bm25", "fusion")
    copy = tmp_path / "copy.run"
    shutil.copy(RUNS[0], copy)
    with pytest.raises(ValueError, match=r"bm25\.run and .*copy\.run are both runs named 'bm25'"):
        read_trec([RUNS[0], copy], QRELS, measure="AP")
    with pytest.raises(ValueError, match="not both"):
        read_trec(RUNS, QRELS, systems={"a": RUNS[0]})
    q = read_trec_eval_q(None, measure="map", systems={"x": Q_FILES[0], "y": Q_FILES[2]})
    assert q.systems == ("x", "y")


def test_malformed_run_and_qrels_lines_are_refused_with_file_and_line(tmp_path):
    cases = [
        (RUNS[0], "301 Q0 FT911-1003 3 11.7795 bm25", "301 Q0 FT911-1003 3 11.7795", r"bm25\.run:3: expected 6 fields"),
        (RUNS[0], "301 Q0 FT911-1003 3 11.7795 bm25", "301 Q0 FT911-1003 3 high bm25",
         r"bm25\.run:3: the score 'high' is not a finite decimal number"),
        (RUNS[0], "301 Q0 FT911-1003 3 11.7795 bm25", "301 Q0 FT911-1003 3 nan bm25", r"bm25\.run:3: the score 'nan'"),
        (RUNS[0], "301 Q0 FT911-1003 3 11.7795 bm25", "301 Q0 FT911-1003 3.0 11.7795 bm25",
         r"bm25\.run:3: the rank '3\.0' is not an integer"),
        (RUNS[0], "301 Q0 FT911-1003 3 11.7795 bm25", "301 Q0 FT911-1003 3 11.7795 bm25 extra",
         r"bm25\.run:3: expected 6 fields .* got 7"),
        (QRELS, "301 0 FT911-1002 1", "301 0 FT911-1002 yes", r"qrels\.txt:2: the rel 'yes' is not an integer"),
        (QRELS, "301 0 FT911-1002 1", "301 0 FT911-1002", r"qrels\.txt:2: expected 4 fields"),
    ]
    for source, old, new, message in cases:
        path = _edited(tmp_path, source, old, new)
        runs, qrels = ([path], QRELS) if source != QRELS else ([RUNS[0]], path)
        with pytest.raises(ValueError, match=message):
            read_trec(runs, qrels, measure="AP")


def test_comments_blank_lines_a_byte_order_mark_and_gzip_are_read_as_trec_eval_reads_them(tmp_path):
    expected = read_trec(RUNS[:2], QRELS, measure=["AP", "P@5"])
    text = RUNS[0].read_text().splitlines(keepends=True)
    commented = tmp_path / "bm25.run"
    commented.write_text("\ufeff# BM25 k1=0.9 b=0.4\n\n" + "".join(text[:5]) + "\n" + "".join(text[5:]))
    zipped = tmp_path / "dense.run.gz"
    with gzip.open(zipped, "wb") as f:
        f.write(RUNS[1].read_bytes())
    assert read_trec([commented, zipped], QRELS, measure=["AP", "P@5"]) == expected
    # Line numbers count the comment and blank lines.
    bad = tmp_path / "bad.run"
    bad.write_text("# header\n\n" + "".join(text[:3]) + "301 Q0 FT911-1011 4 x bm25\n")
    with pytest.raises(ValueError, match=r"bad\.run:6: the score 'x'"):
        read_trec([bad], QRELS, measure="AP")


def test_a_document_ranked_or_judged_twice_is_refused_as_trec_eval_refuses_it(tmp_path):
    lines = RUNS[0].read_text().splitlines(keepends=True)
    twice = tmp_path / "twice.run"
    twice.write_text("".join(lines[:6]) + lines[1].replace(" 2 ", " 7 ") + "".join(lines[6:]))
    with pytest.raises(ValueError, match=r"twice\.run:7: document 'FT911-1004' is ranked again for topic '301' "
                                         r"\(first at line 2\)"):
        read_trec([twice], QRELS, measure="AP")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS.read_text() + "302 0 " + _split_lines(QRELS)[8][2] + " 1\n")
    with pytest.raises(ValueError, match=r"qrels\.txt:36: document '.*' is judged again for topic '302'"):
        read_trec(RUNS, qrels, measure="AP")


def test_a_run_of_no_judged_topic_and_unknown_measures_are_refused(tmp_path):
    other = tmp_path / "other.run"
    other.write_text(RUNS[0].read_text().replace("30", "q30").replace("310", "q310"))
    with pytest.raises(ValueError, match=r"other\.run: no topic of this run is in the qrels"):
        read_trec([other], QRELS, measure="AP")
    with pytest.raises(ValueError, match="ir-measures cannot read the measure 'nDCG@x'"):
        read_trec(RUNS, QRELS, measure="nDCG@x")
    # The number of relevant judgements of a topic the run lacks is not 0 under trec_eval -c.
    assert read_trec(RUNS[:1], QRELS, measure="NumRel").scores["NumRel"]["bm25"].tolist() == [3, 3, 4, 4, 0]
    with pytest.raises(ValueError, match=r"dense\.run: the run has no topic '304' \(judged at .*qrels\.txt:22\)"):
        read_trec(RUNS, QRELS, measure=["AP", "NumRel"])
    with pytest.raises(ValueError, match="name one measure twice"):
        read_trec(RUNS, QRELS, measure=["AP", "AP"])


def _first_lines(path):
    first = {}
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        first.setdefault(line.split()[0], lineno)
    return first


def test_each_record_names_the_first_line_of_its_topic():
    records = trec_records(RUNS[:2], QRELS, measure="AP").frame
    assert list(records.columns) == ["task", "system", "item", "score", "file", "line"]
    runs, qrels = {p: _first_lines(p) for p in RUNS[:2]}, _first_lines(QRELS)
    for _, row in records.iterrows():
        if row["system"] == "dense-v1" and row["item"] == "304":
            # The run lacks the topic: the record comes from the qrels' first line of it.
            assert (row["file"], row["line"], row["score"]) == (str(QRELS), qrels["304"], 0.0)
        else:
            path = RUNS[0] if row["system"] == "bm25" else RUNS[1]
            assert (row["file"], row["line"]) == (str(path), runs[path][row["item"]])
    printed = trec_eval_q_records(Q_FILES[:1], measure="P_5").frame
    lines = (DATA / "bm25.q").read_text().splitlines()
    for _, row in printed.iterrows():
        assert lines[row["line"] - 1].split() == ["P_5", row["item"], f"{row['score']:.4f}"]


def test_the_evaluation_compares_the_runs_per_measure():
    ev = read_trec(RUNS, QRELS, measure=["nDCG@10", "RR"])
    result = ev.compare(rng=0, n_resamples=200)
    assert result is not None
    assert ev.scores["RR"]["rerank"].dtype == np.float64 and len(ev.ids["RR"]) == 5
