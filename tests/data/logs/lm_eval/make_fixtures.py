"""Writes the lm-evaluation-harness fixtures of tests/test_lm_eval.py: sample logs as
``lm_eval --log_samples --output_path <folder>`` lays them out (one directory per model,
``samples_<task>_<date>.jsonl`` and ``results_<date>.json`` in it), line by line with the
fields, nesting, key order, types and hashes the harness writes, on made-up documents and
scores.

    python tests/data/logs/lm_eval/make_fixtures.py     # rewrites the folders next to it

- out/: three models on boolq (multiple choice, one filter "none", metric acc; two documents
  per passage) and gsm8k_cot (generation, filters strict-match and flexible-extract, metric
  exact_match). Llama ran on two ranks, so its boolq lines come in rank order (0, 2, 1, 3).
  Qwen's prompts went through its chat template, so its prompt hashes differ.
- reruns/: two models with two runs each of gsm8k_cot (sampled generations).
- malformed/: a boolq log whose third line is cut short.
- hash_mismatch/: two models whose boolq document 2 differs (another dataset revision).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent

BOOLQ = [  # (passage, question, label)
    ("The Eiffel Tower is 330 metres tall; the Statue of Liberty is 93 metres tall.",
     "is the eiffel tower taller than the statue of liberty", 1),
    ("The Eiffel Tower is 330 metres tall; the Statue of Liberty is 93 metres tall.",
     "is the statue of liberty taller than the eiffel tower", 0),
    ("Mercury is the closest planet to the Sun and has no moons.", "does mercury have a moon", 0),
    ("Mercury is the closest planet to the Sun and has no moons.", "is mercury the closest planet to the sun", 1),
]
GSM8K = [  # (question, worked answer, final answer)
    ("Tom has 3 boxes of 4 pens. How many pens does he have?", "3 * 4 = 12 pens.\n#### 12", "12"),
    ("A cake costs $7 and a pie $5. What do 2 cakes and 1 pie cost?", "2 * 7 + 5 = 19 dollars.\n#### 19", "19"),
    ("Ann reads 9 pages a day. How many pages does she read in a week?", "9 * 7 = 63 pages.\n#### 63", "63"),
]
UNTIL = {"do_sample": False, "until": ["Q:", "</s>", "<|im_end|>"]}
SAMPLED = {"do_sample": True, "temperature": 0.7, "until": ["Q:", "</s>", "<|im_end|>"]}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def doc_hash(doc: dict) -> str:
    return sha(json.dumps(doc, indent=2, ensure_ascii=False))


def chat(prompt: str) -> str:
    return f"<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"


def line(doc_id: int, doc: dict, target: str, arguments: list, resps: list, filtered: list, filter_name: str,
         metric: str, value: float) -> str:
    sample = {
        "doc_id": doc_id, "doc": doc, "target": target,
        "arguments": {f"gen_args_{i}": {f"arg_{j}": a for j, a in enumerate(arg)} for i, arg in enumerate(arguments)},
        "resps": resps, "filtered_resps": filtered, "filter": filter_name, "metrics": [metric],
        "doc_hash": doc_hash(doc), "prompt_hash": sha(arguments[0][0]), "target_hash": sha(target),
        metric: value,
    }
    return json.dumps(sample, ensure_ascii=False) + "\n"


def boolq_lines(acc: list[int], order: list[int], template: bool = False, docs: list = BOOLQ) -> str:
    out = []
    for i in order:
        passage, question, label = docs[i]
        doc = {"question": question, "passage": passage, "idx": i, "label": label}
        prompt = f"{passage}\nQuestion: {question}?\nAnswer:"
        prompt = chat(prompt) if template else prompt
        # Log-likelihoods of " no" and " yes": the model picks the larger, right when acc is 1.
        right, wrong = -0.25 - 0.125 * i, -1.5 - 0.25 * i
        lls = [right, wrong] if (label == 0) == bool(acc[i]) else [wrong, right]
        greedy = [str(ll == max(lls)) for ll in lls]
        out.append(line(i, doc, str(label), [(prompt, " no"), (prompt, " yes")],
                        [[[str(ll), g]] for ll, g in zip(lls, greedy)], [[str(ll), g] for ll, g in zip(lls, greedy)],
                        "none", "acc", float(acc[i])))
    return "".join(out)


def gsm8k_lines(strict: list[int], flexible: list[int], template: bool = False, gen: dict = UNTIL) -> str:
    out = []
    for filter_name, scores in (("strict-match", strict), ("flexible-extract", flexible)):
        for i, (question, answer, final) in enumerate(GSM8K):
            doc = {"question": question, "answer": answer}
            prompt = f"Q: {question}\nA:"
            prompt = chat(prompt) if template else prompt
            # strict-match needs "The answer is N."; flexible-extract takes the last number.
            if strict[i]:
                response = f" {answer.split(chr(10))[0]} The answer is {final}."
            elif flexible[i]:
                response = f" {answer.split(chr(10))[0]} So {final}"
            else:
                response = " I am not sure, maybe 1000"
            extracted = ((final if strict[i] else "[invalid]") if filter_name == "strict-match"
                         else (final if flexible[i] else "1000"))
            out.append(line(i, doc, final, [(prompt, gen)], [[response]], [extracted], filter_name, "exact_match",
                            float(scores[i])))
    return "".join(out)


def results(model: str, date: str, values: dict) -> str:
    sanitized = model.replace("/", "__")
    body = {
        "results": {task: {"alias": task, **{k: v for k, v in metrics.items()}} for task, metrics in values.items()},
        "n-samples": {task: {"original": n, "effective": n} for task, n in (("boolq", 4), ("gsm8k_cot", 3))
                      if task in values},
        "model_name": model, "model_name_sanitized": sanitized, "date": date,
    }
    return json.dumps(body, indent=2, ensure_ascii=False)


def write(folder: Path, model: str, date: str, files: dict[str, str]) -> None:
    d = folder / model.replace("/", "__")
    d.mkdir(parents=True, exist_ok=True)
    for task, text in files.items():
        name = f"results_{date}.json" if task == "results" else f"samples_{task}_{date}.jsonl"
        (d / name).write_text(text, encoding="utf-8")


def mean(v: list[int]) -> float:
    return sum(v) / len(v)


def main() -> None:
    for sub in ("out", "reruns", "malformed", "hash_mismatch"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    models = {  # model: (date, boolq acc by doc, gsm8k strict, gsm8k flexible, chat template, boolq line order)
        "EleutherAI/pythia-160m": ("2024-12-02T10-11-12.345678", [1, 0, 0, 1], [0, 0, 0], [1, 0, 0], False, [0, 1, 2, 3]),
        "Qwen/Qwen2.5-0.5B-Instruct": ("2024-12-02T11-30-05.000321", [1, 1, 0, 1], [1, 0, 0], [1, 1, 0], True,
                                       [0, 1, 2, 3]),
        "meta-llama/Llama-3.2-1B": ("2024-12-03T08-00-59.5", [1, 0, 1, 1], [1, 1, 0], [1, 1, 1], False, [0, 2, 1, 3]),
    }
    for model, (date, acc, strict, flexible, template, order) in models.items():
        write(HERE / "out", model, date, {
            "boolq": boolq_lines(acc, order, template),
            "gsm8k_cot": gsm8k_lines(strict, flexible, template),
            "results": results(model, date, {"boolq": {"acc,none": mean(acc)},
                                             "gsm8k_cot": {"exact_match,strict-match": mean(strict),
                                                           "exact_match,flexible-extract": mean(flexible)}}),
        })
    reruns = {  # model: ((date, strict, flexible) per run)
        "EleutherAI/pythia-160m": (("2024-12-04T09-00-00.000001", [0, 0, 0], [1, 0, 0]),
                                   ("2024-12-04T21-15-30", [0, 0, 1], [0, 0, 1])),
        "Qwen/Qwen2.5-0.5B-Instruct": (("2024-12-05T07-45-00.25", [1, 0, 0], [1, 1, 0]),
                                       ("2024-12-05T07-45-00.5", [1, 0, 1], [1, 0, 1])),
    }
    for model, model_runs in reruns.items():
        for date, strict, flexible in model_runs:
            write(HERE / "reruns", model, date, {"gsm8k_cot": gsm8k_lines(strict, flexible, gen=SAMPLED)})
    cut = boolq_lines([1, 0, 0, 1], [0, 1, 2, 3]).splitlines(keepends=True)
    cut[2] = cut[2][: len(cut[2]) // 2] + "\n"
    write(HERE / "malformed", "EleutherAI/pythia-160m", "2024-12-02T10-11-12.345678", {"boolq": "".join(cut)})
    revised = list(BOOLQ)
    revised[2] = ("Mercury, the closest planet to the Sun, has no natural satellites.", *BOOLQ[2][1:])
    write(HERE / "hash_mismatch", "EleutherAI/pythia-160m", "2024-12-02T10-11-12.345678",
          {"boolq": boolq_lines([1, 0, 0, 1], [0, 1, 2, 3])})
    write(HERE / "hash_mismatch", "Qwen/Qwen2.5-0.5B-Instruct", "2024-12-02T11-30-05.000321",
          {"boolq": boolq_lines([1, 1, 0, 1], [0, 1, 2, 3], docs=revised)})


if __name__ == "__main__":
    main()
