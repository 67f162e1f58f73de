"""Writes <run>.q: what ``trec_eval -q -c -m runid -m num_q -m num_ret -m num_rel -m num_rel_ret
-m map -m recip_rank -m P.5 -m ndcg_cut.10 qrels.txt <run>`` prints for each run here,
computed with pytrec_eval (trec_eval's own code) and printed in trec_eval's layout.

trec_eval goes through the qrels' topics in sorted order (a run's topics that the qrels lack
are never reached), printing each measure of a topic as ``%-22s\\t%s\\t%6.4f`` (counts as
``%ld``), in the order of its measure table; then the summary lines, whose qid is ``all``:
the run's tag, the number of topics, the counts summed and the other measures averaged over
every judged topic. With -c a topic the run lacks is scored on an empty ranking: 0 for every
measure here but num_rel, which counts the topic's relevant judgements.

Run from this folder: python make_q.py
"""

import pathlib

import pytrec_eval

HERE = pathlib.Path(__file__).parent
RUNS = ("bm25.run", "dense.run", "rerank.run")
# trec_eval -m names, and the names it prints, in the order of trec_eval's measure table.
REQUESTED = {"num_ret", "num_rel", "num_rel_ret", "map", "recip_rank", "P.5", "ndcg_cut.10"}
PRINTED = ("num_ret", "num_rel", "num_rel_ret", "map", "recip_rank", "P_5", "ndcg_cut_10")
COUNTS = ("num_ret", "num_rel", "num_rel_ret")


def read_qrels(path):
    qrels = {}
    for line in path.read_text().splitlines():
        qid, _, docno, rel = line.split()
        qrels.setdefault(qid, {})[docno] = int(rel)
    return qrels


def read_run(path):
    run, tags = {}, []
    for line in path.read_text().splitlines():
        qid, _, docno, _, score, tag = line.split()
        run.setdefault(qid, {})[docno] = float(score)
        tags.append(tag)
    return run, tags[0]


def line(measure, qid, value):
    if measure in COUNTS or measure == "num_q":
        return f"{measure:<22}\t{qid}\t{int(value)}\n"
    return f"{measure:<22}\t{qid}\t{value:6.4f}\n"


def main():
    qrels = read_qrels(HERE / "qrels.txt")
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, REQUESTED)
    for name in RUNS:
        run, tag = read_run(HERE / name)
        scored = evaluator.evaluate(run)
        out, totals = [], dict.fromkeys(PRINTED, 0.0)
        for qid in sorted(qrels):
            values = scored.get(qid)
            if values is None:  # -c: an empty ranking
                values = dict.fromkeys(PRINTED, 0.0)
                values["num_rel"] = sum(rel > 0 for rel in qrels[qid].values())
            for m in PRINTED:
                out.append(line(m, qid, values[m]))
                totals[m] += values[m]
        out.append(f"{'runid':<22}\tall\t{tag}\n")
        out.append(line("num_q", "all", len(qrels)))
        for m in PRINTED:
            out.append(line(m, "all", totals[m] if m in COUNTS else totals[m] / len(qrels)))
        (HERE / f"{name[:-len('.run')]}.q").write_text("".join(out))


if __name__ == "__main__":
    main()
