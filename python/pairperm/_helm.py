"""Per-instance scores from HELM runs (``benchmark_output/runs/<suite>/<run_name>/``).

``helm-run`` writes one folder per run spec, that is per (scenario with its arguments, model):
``run_spec.json`` (the spec: ``name``, ``adapter_spec`` with ``model``, ...),
``per_instance_stats.json`` (a JSON array with one record per instance, train trial and metric:
``instance_id``, ``perturbation`` (absent for an unperturbed instance), ``train_trial_index`` and
``stats``, each stat a ``name`` (``name``, ``split``, ``sub_split``, ``perturbation``) with
``count``, ``sum``, ``sum_squared``, ``min``, ``max``, ``mean``, ``variance``, ``stddev``),
``stats.json``, ``scenario.json`` and ``scenario_state.json``; ``helm-summarize`` adds
``instances.json`` (every evaluated instance: ``input``, ``references``, ``split``,
``sub_split``, ``id``, ``perturbation``, ...). HELM leaves out every field that is null.

A system is a run's ``adapter_spec.model``; a task is the run's name without its ``model=`` and
``model_deployment=`` arguments (``mmlu:subject=anatomy,method=multiple_choice_joint``), so that
the runs of one scenario by several models are one task. An item is an instance id, and its
score the chosen stat's ``mean`` on that instance (``sum / count``; a per-instance stat usually
counts one value). Every train trial is a sample of the item. In error messages and in the records'
``line`` column, a record is its place in the JSON array, ``[12]`` (0-based, as in ``[12].stats[3]``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

from ._fields import MISSING, FieldPath, json_document
from ._records import Evaluation, Records, Samples, assemble, default_metric, pandas_or_raise

__all__ = ["read_helm"]

_FUNC = "read_helm"
_MODEL_ARGUMENTS = ("model", "model_deployment")

PathArg = Union[str, "os.PathLike[str]"]
Perturbation = Union[None, str, Mapping[str, Any]]


def read_helm(path: Union[PathArg, Sequence[PathArg]], *, stat: str = "exact_match", split: Optional[str] = "test",
              perturbation: Perturbation = None, group_field: Optional[str] = None,
              systems: Union[None, Mapping[str, str], Sequence[str]] = None,
              samples: Samples = "columns") -> Evaluation:
    """Per-instance scores of several models from HELM runs, aligned by instance id.

    Parameters
    ----------
    path : path or sequence of paths
        A suite folder (``benchmark_output/runs/<suite>``: every subfolder holding a
        ``run_spec.json`` is a run; others, such as ``eval_cache`` or ``groups``, are passed
        over), one run folder, or a sequence of run folders.
    stat : str
        The per-instance stat (``exact_match``, ``quasi_exact_match``, ``f1_score``,
        ``rouge_l``, ...). A run without it (on the split and perturbation asked for), such as
        a run of another scenario in the suite, is passed over; one whose task another model's
        run has it for is refused, and so is reading no run at all.
    split : str or None
        The stat's split (``"test"``, ``"valid"``); None takes whichever one split the run's
        instances have, and refuses a run that holds the stat on several.
    perturbation : None, str or mapping
        None: the unperturbed instances only (HELM writes no ``perturbation`` for them). A name
        (``"typos"``, ``"dialect"``, ``"mild_mix"``): the instances of the perturbation of that
        name, refused when the run holds several perturbations of that name that differ in
        other fields (give the description then: a mapping of the fields to match, such as
        ``{"name": "dialect", "target_class": "AAVE"}``). Instances of other perturbations
        are passed over; one task never mixes perturbed and unperturbed instances.
    group_field : str, optional
        A dotted path into each instance, such as ``"sub_split"`` or ``"input.text"`` (a list
        element by its index: ``"references.0.output.text"``), whose value is the instance's
        group, the unit that is exchanged as a whole. The instances are read from the run's
        ``instances.json`` or, where ``helm-summarize`` has not written one, from the
        instances of ``scenario_state.json``, joined by instance id (and perturbation).
    systems : mapping or sequence, optional
        ``{model: name}``: read only the runs of these models (as ``adapter_spec.model``
        writes them, ``"openai/gpt2"``), each system named as given; a sequence of models:
        read only those, named as they are. By default every run, named by its model.
    samples : {"columns", "groups"}
        With several train trials, each item's scores as ``(N, k)`` columns, one per trial
        index (every instance needs every trial), or each (instance, trial) as a row grouped
        by instance.

    Returns
    -------
    Evaluation
        A task per run name without its model; the metric is ``"accuracy"`` where the stat is
        0 or 1 on every instance of the task (integer scores), else ``"mean"``.

    Raises
    ------
    ValueError
        Naming the file and the JSON path of the record: a run without the stat on the split
        and perturbation asked for (listing those it has), a stat without a finite value, a
        record whose fields are not of HELM's types, two runs of one task by one system, a
        group field an instance lacks, and (from the alignment) an instance or train trial one
        model has and another lacks.
    """
    records = helm_records(path, stat=stat, split=split, perturbation=perturbation, group_field=group_field,
                           systems=systems)
    return assemble(records, samples=samples, func=_FUNC)


class _Score(NamedTuple):
    item: str
    trial: int
    value: Union[int, float]
    record: int


def helm_records(path: Union[PathArg, Sequence[PathArg]], *, stat: str = "exact_match",
                 split: Optional[str] = "test", perturbation: Perturbation = None, group_field: Optional[str] = None,
                 systems: Union[None, Mapping[str, str], Sequence[str]] = None) -> Records:
    """The records :func:`read_helm` assembles (its parameters but `samples`)."""
    pd = pandas_or_raise(_FUNC)
    if not isinstance(stat, str) or not stat:
        raise ValueError(f"{_FUNC}: stat must be the name of a per-instance stat; got {stat!r}")
    if split is not None and not isinstance(split, str):
        raise ValueError(f"{_FUNC}: split must be a string or None; got {split!r}")
    if perturbation is not None and not isinstance(perturbation, (str, Mapping)):
        raise ValueError(f"{_FUNC}: perturbation must be None, a name or a mapping of fields; got {perturbation!r}")
    names = _system_names(systems)
    runs: dict[tuple[str, str], Path] = {}
    seen_models: set[str] = set()
    rows: list[tuple[str, str, str, int, Any, Union[int, float], str, str]] = []
    # Runs without the stat (on the split and perturbation asked for): those of other scenarios
    # in a suite, passed over unless another system's run of the same task has it.
    passed_over: list[tuple[str, Path, tuple[bool, str]]] = []
    for folder in _run_folders(path):
        task, model = _read_run_spec(folder / "run_spec.json")
        seen_models.add(model)
        if names is not None and model not in names:
            continue
        system = model if names is None else names[model]
        if (task, system) in runs:
            raise ValueError(f"{_FUNC}: {runs[task, system]} and {folder} are both runs of task {task!r} by system "
                             f"{system!r}; give the run folders of one of them")
        runs[task, system] = folder
        stats_file = folder / "per_instance_stats.json"
        description, scores, holds = _read_scores(stats_file, stat, split, perturbation)
        if not scores:
            passed_over.append((task, stats_file, holds))
            continue
        groups: dict[str, Any] = {}
        if group_field is not None:
            groups = _read_groups(folder, group_field, description, {s.item for s in scores})
        rows.extend((task, system, s.item, s.trial, groups.get(s.item), s.value, str(stats_file), f"[{s.record}]")
                    for s in scores)
    if names is not None:
        absent = [m for m in names if m not in seen_models]
        if absent:
            raise ValueError(f"{_FUNC}: no run of model {', '.join(map(repr, absent))}; the runs' models: "
                             f"{', '.join(map(repr, sorted(seen_models)))}")
    wanted = (f"stat {stat!r}" + (f" on split {split!r}" if split is not None else "")
              + (" on the unperturbed instances" if perturbation is None else f" with perturbation {perturbation!r}"))
    read = {row[0] for row in rows}
    # Where no run has it, the message shows a run that has the stat at least, if one does.
    passed_over.sort(key=lambda run: not run[2][0])
    for task, file, (_, held) in passed_over:
        if task in read or not rows:
            others = f", which other runs of task {task!r} have" if task in read else " in any run read"
            raise ValueError(f"{_FUNC}: {file}: no {wanted}{others}; {held}")
    if not rows:
        raise ValueError(f"{_FUNC}: no run to read")
    frame = pd.DataFrame(rows, columns=["task", "system", "item", "sample", "group", "score", "file", "line"])
    if group_field is None:
        frame = frame.drop(columns="group")
    metrics = {str(task): default_metric(part.to_numpy())
               for task, part in frame.groupby("task", sort=False)["score"]}
    return Records(frame, ("score",), metrics)


def _load(file: Path) -> Any:
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ValueError(f"{_FUNC}: {file}: cannot read file: {exc.strerror or exc}") from None
    try:
        return json_document(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{_FUNC}: {file}: not a JSON document ({exc})") from None


def _system_names(systems: Union[None, Mapping[str, str], Sequence[str]]) -> Optional[dict[str, str]]:
    if systems is None:
        return None
    if isinstance(systems, Mapping):
        names = {str(m): n for m, n in systems.items()}
        bad = [n for n in names.values() if not isinstance(n, str) or not n]
        if bad:
            raise ValueError(f"{_FUNC}: systems maps models to names (strings); got {bad[0]!r}")
    elif isinstance(systems, str):
        names = {systems: systems}
    else:
        names = {str(m): str(m) for m in systems}
    if not names:
        raise ValueError(f"{_FUNC}: systems names no model")
    return names


def _run_folders(path: Union[PathArg, Sequence[PathArg]]) -> list[Path]:
    """The run folders: the given ones, or those of a suite folder (its subfolders with a
    run_spec.json, in name order)."""
    if isinstance(path, (str, os.PathLike)):
        folder = Path(path)
        if not folder.is_dir():
            raise ValueError(f"{_FUNC}: {folder}: no such folder (give a suite folder or run folders)")
        if (folder / "run_spec.json").is_file():
            return [folder]
        runs = sorted(p for p in folder.iterdir() if p.is_dir() and (p / "run_spec.json").is_file())
        if not runs:
            raise ValueError(f"{_FUNC}: {folder}: no HELM run here (no subfolder holds a run_spec.json)")
        return runs
    folders = [Path(p) for p in path]
    if not folders:
        raise ValueError(f"{_FUNC}: no run folders given")
    for folder in folders:
        if not (folder / "run_spec.json").is_file():
            raise ValueError(f"{_FUNC}: {folder}: not a HELM run folder (no run_spec.json)")
    return folders


def _read_run_spec(file: Path) -> tuple[str, str]:
    """(task, model) of a run: the run's name without its model arguments, and its model."""
    spec = _load(file)
    if not isinstance(spec, dict):
        raise ValueError(f"{_FUNC}: {file}: expected a JSON object (a RunSpec)")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{_FUNC}: {file}: name: expected the run's name (a string); got {name!r}")
    adapter = spec.get("adapter_spec")
    model = adapter.get("model") if isinstance(adapter, dict) else None
    if not isinstance(model, str) or not model:
        raise ValueError(f"{_FUNC}: {file}: adapter_spec.model: expected the model's name (a string); got {model!r}")
    return task_of_run(name), model


def task_of_run(name: str) -> str:
    """A run name without its ``model=`` and ``model_deployment=`` arguments: HELM's run names
    are ``<scenario>:<key>=<value>,...``, the model expanders' arguments among them."""
    scenario, colon, arguments = name.partition(":")
    if not colon:
        return name
    kept = [a for a in arguments.split(",") if a.partition("=")[0] not in _MODEL_ARGUMENTS]
    return f"{scenario}:{','.join(kept)}" if kept else scenario


def _matches(wanted: Perturbation, found: Any) -> bool:
    if wanted is None:
        return found is None
    if not isinstance(found, dict):
        return False
    if isinstance(wanted, str):
        return found.get("name") == wanted
    return all(k in found and found[k] == v for k, v in wanted.items())


def _same_perturbation(listed: Any, description: Any) -> bool:
    """Whether an instance's perturbation is the run's `description`: instances.json is written
    through cattrs by the declared type, PerturbationDescription, without a subclass's own
    fields (a dialect's prob and classes), which per_instance_stats.json keeps; the fields both
    have must agree."""
    if listed is None or description is None:
        return listed is None and description is None
    return isinstance(listed, dict) and all(description[k] == v for k, v in listed.items() if k in description)


def _read_scores(file: Path, stat: str, split: Optional[str],
                 perturbation: Perturbation) -> tuple[Any, list[_Score], tuple[bool, str]]:
    """The run's perturbation description matched (None: unperturbed) and the stat's value on
    each of its instances and train trials; where it has none, whether the run has the stat at
    all and what its records hold."""
    records = _load(file)
    if not isinstance(records, list):
        raise ValueError(f"{_FUNC}: {file}: expected a JSON array of per-instance stats")
    scores: list[_Score] = []
    descriptions: dict[str, Any] = {}
    splits: dict[Any, None] = {}  # the stat's splits among the records of the perturbation asked for
    held: dict[str, None] = {}  # every stat's name, and
    perturbations: dict[str, None] = {}  # every perturbation's, for messages
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise ValueError(f"{_FUNC}: {file}: [{i}]: expected an object (PerInstanceStats)")
        found = record.get("perturbation")
        if found is not None and not isinstance(found, dict):
            raise ValueError(f"{_FUNC}: {file}: [{i}].perturbation: expected an object; got {found!r}")
        perturbations["none" if found is None else repr(found.get("name"))] = None
        item, trial, stats = _record_fields(file, i, record)
        wanted = _matches(perturbation, found)
        for j, s in enumerate(stats):
            where = f"{file}: [{i}].stats[{j}]"
            metric = s.get("name") if isinstance(s, dict) else None
            if not isinstance(metric, dict) or not isinstance(metric.get("name"), str):
                raise ValueError(f"{_FUNC}: {where}.name: expected a MetricName object with a name")
            held[metric["name"]] = None
            if not wanted or metric["name"] != stat:
                continue
            splits[metric.get("split")] = None
            if split is not None and metric.get("split") != split:
                continue
            if metric.get("perturbation") != found:
                raise ValueError(f"{_FUNC}: {where}.name.perturbation: {metric.get('perturbation')!r} differs from the "
                                 f"record's perturbation {found!r}")
            descriptions.setdefault(json.dumps(found, sort_keys=True), found)
            scores.append(_Score(item, trial, _stat_value(where, s), i))
    if not scores:
        holds = (f"its records' stats: {', '.join(sorted(held)[:12]) or 'none'}; the splits of {stat!r} there: "
                 f"{', '.join(map(repr, splits)) or 'none'}; their perturbations: {', '.join(sorted(perturbations))}")
        return None, [], (stat in held, holds)
    if len(descriptions) > 1:
        texts = list(descriptions)
        raise ValueError(f"{_FUNC}: {file}: perturbation {perturbation!r} matches several descriptions: "
                         f"{'; '.join(texts[:3])}; give the fields that tell the one wanted (a mapping)")
    if split is None and len(splits) > 1:
        raise ValueError(f"{_FUNC}: {file}: the stat {stat!r} is on several splits ({', '.join(map(repr, splits))}); "
                         "give split=")
    return next(iter(descriptions.values())), scores, (True, "")


def _record_fields(file: Path, i: int, record: dict[str, Any]) -> tuple[str, int, list[Any]]:
    item = record.get("instance_id")
    if not isinstance(item, str):
        raise ValueError(f"{_FUNC}: {file}: [{i}].instance_id: expected a string; got {item!r}")
    trial = record.get("train_trial_index")
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
        raise ValueError(f"{_FUNC}: {file}: [{i}].train_trial_index: expected an integer >= 0; got {trial!r}")
    stats = record.get("stats")
    if not isinstance(stats, list):
        raise ValueError(f"{_FUNC}: {file}: [{i}].stats: expected an array of stats; got {stats!r}")
    return item, trial, stats


def _stat_value(where: str, s: dict[str, Any]) -> Union[int, float]:
    count = s.get("count")
    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"{_FUNC}: {where}.count: expected an integer; got {count!r}")
    if count < 1:
        raise ValueError(f"{_FUNC}: {where}: the stat has no value (count {count})")
    value = s.get("mean")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{_FUNC}: {where}.mean: expected a finite number; got {value!r}")
    return value


def _read_groups(folder: Path, field: str, description: Any,
                 items: set[str]) -> dict[str, Any]:
    """{instance id: the value at `field`} for the instances of the run's perturbation."""
    path = FieldPath(field)
    listed = folder / "instances.json"
    if listed.is_file():
        file, document = listed, _load(listed)
        if not isinstance(document, list):
            raise ValueError(f"{_FUNC}: {file}: expected a JSON array of instances")
        instances = [(f"[{i}]", x) for i, x in enumerate(document)]
    else:
        file = folder / "scenario_state.json"
        if not file.is_file():
            raise ValueError(f"{_FUNC}: {folder}: neither instances.json nor scenario_state.json, where the instances "
                             f"(and their {field!r}) are")
        state = _load(file)
        states = state.get("request_states") if isinstance(state, dict) else None
        if not isinstance(states, list):
            raise ValueError(f"{_FUNC}: {file}: request_states: expected an array")
        instances = [(f"request_states[{i}].instance", s.get("instance") if isinstance(s, dict) else None)
                     for i, s in enumerate(states)]
    groups: dict[str, tuple[Any, str]] = {}
    for where, instance in instances:
        if not isinstance(instance, dict):
            raise ValueError(f"{_FUNC}: {file}: {where}: expected an object (an Instance)")
        item = instance.get("id")
        if item not in items or not _same_perturbation(instance.get("perturbation"), description):
            continue
        value = _group_label(instance, path, f"{file}: {where}")
        if item in groups and groups[item][0] != value:
            raise ValueError(f"{_FUNC}: {file}: {where}.{field}: {value!r}, but {groups[item][1]} gives instance "
                             f"{item!r} the {field!r} {groups[item][0]!r}")
        groups.setdefault(item, (value, where))
    absent = sorted(items - groups.keys())
    if absent:
        raise ValueError(f"{_FUNC}: {file}: no instance {absent[0]!r} (of {len(absent)} scored in "
                         f"{folder / 'per_instance_stats.json'} but not here) to read its {field!r} from")
    return {item: value for item, (value, _) in groups.items()}


def _group_label(instance: dict[str, Any], path: FieldPath, where: str) -> Any:
    """The label at a dotted path of an instance; HELM leaves out null fields, so a missing one
    is an error rather than a group of its own."""
    value = path.lookup(instance)
    if value is MISSING:
        raise ValueError(f"{_FUNC}: {where}: {path.missing(instance)} (HELM leaves null fields out)")
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or (
            isinstance(value, float) and not math.isfinite(value)):
        raise ValueError(f"{_FUNC}: {where}.{path.text}: expected a string or a finite number to group by; got "
                         f"{value!r:.80}")
    return value
