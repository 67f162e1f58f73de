"""The compiled core's runtime behaviour: typed errors, exported limits, the ratio-statistic
object, pmfs read in place, thread-count independence, Ctrl-C, interpreter exit and fork()."""

import itertools
import signal
import subprocess
import sys
import textwrap
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from marks import quick_first
from pairperm import _core

PACKAGE_PARENT = str(Path(_core.__file__).resolve().parent.parent)


def run_script(body: str, timeout: float) -> subprocess.CompletedProcess:
    """Run `body` in a fresh interpreter that imports the same pairperm as the tests."""
    code = f"import sys\nsys.path.insert(0, {PACKAGE_PARENT!r})\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)


# -- typed "support too large" error and the exported limits ---------------------------------


def test_support_too_large_is_a_typed_value_error_carrying_the_size():
    k = 2**40
    with pytest.raises(_core.SupportTooLargeError) as info:
        _core.convolve_dp(np.array([k], dtype=np.int64), np.zeros(1, dtype=np.int64))
    err = info.value
    assert isinstance(err, ValueError)
    assert err.entries == 2 * (k + 1)  # two rows of the dense support [0, k]
    assert err.limit == _core.max_support
    assert err.entries > err.limit


def test_every_engine_reports_oversized_supports_with_the_same_type():
    big = np.array([2**40, 3], dtype=np.int64)
    zero = np.zeros(2, dtype=np.int64)
    with pytest.raises(_core.SupportTooLargeError):
        _core.convolve_fft(big, zero)
    wide = np.full((64, 3), 2**20, dtype=np.int64)
    with pytest.raises(_core.SupportTooLargeError) as info:
        _core.grouped_distribution_multi(_core.summarize_multi(wide, np.zeros_like(wide)))
    assert info.value.entries > _core.max_support
    with pytest.raises(_core.SupportTooLargeError):
        _core.convolve_dp_multi(wide[:2], np.zeros_like(wide[:2]))


def test_bad_input_is_a_plain_value_error_not_a_support_error():
    with pytest.raises(ValueError) as info:
        _core.convolve_dp(np.zeros(2, dtype=np.int64), np.zeros(3, dtype=np.int64))
    assert not isinstance(info.value, _core.SupportTooLargeError)


def test_max_abs_sum_is_the_enforced_bound():
    limit = _core.max_abs_sum
    zero = np.zeros(1, dtype=np.int64)
    s = _core.summarize(np.array([limit - 1], dtype=np.int64), zero)
    assert s.k_sum == limit - 1
    with pytest.raises(ValueError):
        _core.summarize(np.array([limit], dtype=np.int64), zero)
    with pytest.raises(ValueError):
        _core.summarize_multi(np.array([[limit]], dtype=np.int64), np.zeros((1, 1), dtype=np.int64))


def test_max_ratio_term_is_the_enforced_bound():
    points = np.array([[1, 1]], dtype=np.int64)
    ok = _core.RatioStatistic((_core.max_ratio_term - 1, 0, 0), (1, 0, 0), (0, 0, 0), (1, 0, 0), (0, 1), (0, 1))
    assert _core.ratio_count(points, ok, "greater") == 1
    too_big = _core.RatioStatistic((_core.max_ratio_term + 1, 0, 0), (1, 0, 0), (0, 0, 0), (1, 0, 0), (0, 1), (0, 1))
    with pytest.raises(ValueError):
        _core.ratio_count(points, too_big, "greater")


def test_multidim_tail_bound_bounds_the_reported_truncation():
    rng = np.random.default_rng(3)
    stay = rng.integers(0, 4, (400, 2)).astype(np.int64)
    swap = rng.integers(0, 4, (400, 2)).astype(np.int64)
    _, pmf, truncated = _core.grouped_distribution_multi(_core.summarize_multi(stay, swap))
    assert 0 < truncated <= _core.multidim_tail_bound
    assert abs(pmf.sum() - 1) < 1e-9


def test_no_test_hooks_in_the_shipped_module():
    assert not [name for name in dir(_core) if name.startswith("_raise")]


def _grouped_tails_under(kind: str, laws: list) -> tuple[str, list]:
    """The vector math reported and the grouped tails' (p, log p) of `laws`, (stay, alternative)
    pairs with swap = -stay, in a process whose vector math is capped at `kind`."""
    import json
    import os

    code = f"import sys\nsys.path.insert(0, {PACKAGE_PARENT!r})\n" + textwrap.dedent("""
        import json
        import numpy as np
        from pairperm import _core
        laws = json.load(sys.stdin)
        out = [_core.grouped_pvalue(_core.summarize(np.array(stay), -np.array(stay)), alt) for stay, alt in laws]
        print(json.dumps([_core.vector_math, out]))
    """)
    env = {**os.environ, "PAIRPERM_VECTOR_MATH": kind}
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps([(s.tolist(), a) for s, a in laws]),
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    reported, tails = json.loads(done.stdout)
    return reported, tails


def _tail_laws():
    """Groups of every size (by squaring and by logarithms, 64 and 65 entries included), the
    observed sum walked from the centre into the tail: (stay, alternative) pairs."""
    counts = [300, 150, 65, 64, 63, 40, 20, 9, 8, 5, 2, 1]
    k = np.concatenate([np.full(c, step) for step, c in enumerate(counts, start=1)])
    signs = np.where(np.random.default_rng(5).random(k.size) < 0.5, 1, -1)
    for shift in (0, 150, 300, 450):
        signs[:shift] = 1
        for alt in ("two-sided", "greater", "less"):
            yield signs * k, alt


def test_every_vector_math_kind_gives_the_exact_tails():
    from reference import exact_pvalue, log_fraction, rel_err

    laws = list(_tail_laws())
    exact = [exact_pvalue(stay, -stay, alt) for stay, alt in laws]
    runs = {kind: _grouped_tails_under(kind, laws) for kind in ("avx512", "avx2", "libm")}
    # A cap is a ceiling: a CPU or build without the asked-for kind runs the next one down.
    order = ["libm", "avx2", "avx512"]
    for kind, (reported, _) in runs.items():
        assert order.index(reported) <= order.index(kind), (kind, reported)
    assert runs["libm"][0] == "libm"
    for kind, (_, tails) in runs.items():
        for (p, log_p), e in zip(tails, exact):
            assert rel_err(p, e) <= 1e-12, kind
            assert abs(log_p - log_fraction(e)) <= 1e-12 * max(1.0, abs(log_fraction(e))), kind
    # The kinds agree far inside the tails' accuracy.
    for (_, log_p), (_, log_q) in zip(runs["avx512"][1], runs["libm"][1]):
        assert abs(log_p - log_q) <= 1e-13 * max(1.0, abs(log_q))
    # Any case names a kind.
    for kind in ("AVX2", "Libm"):
        assert _grouped_tails_under(kind, laws) == runs[kind.lower()]


@pytest.mark.parametrize("setting", ["avx", "sse4", "AVX-512"])
def test_a_vector_math_setting_that_names_no_kind_warns_and_caps_nothing(setting):
    # The import still works (an environment variable's typo must not stop every program), and
    # says what it ignored; the tails are those of no cap.
    import os

    code = (f"import sys, warnings\nsys.path.insert(0, {PACKAGE_PARENT!r})\nwarnings.simplefilter('always')\n"
            "import pairperm\nfrom pairperm import _core\nprint(_core.vector_math, repr(_core.vector_math_ignored))")
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                           env={k: v for k, v in os.environ.items() if k != "PAIRPERM_VECTOR_MATH"})
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PAIRPERM_VECTOR_MATH": setting})
    assert done.returncode == 0, done.stderr
    kind = plain.stdout.split()[0]
    assert done.stdout.split() == [kind, repr(setting)]
    assert f"RuntimeWarning: PAIRPERM_VECTOR_MATH={setting!r} names no kind" in done.stderr
    assert f"is ignored: the grouped tails run on {kind}" in done.stderr
    assert "PAIRPERM_VECTOR_MATH" not in plain.stderr


# -- the ratio statistic object and pmfs read in place ----------------------------------------


def _affine(c, s1, s2):
    return c[0] + c[1] * s1 + c[2] * s2


def _h(stat, s1, s2):
    zero = Fraction(*stat.zero)
    def ratio(num, den):
        d = _affine(den, s1, s2)
        return zero if d == 0 else Fraction(_affine(num, s1, s2), d)
    return ratio(stat.a_num, stat.a_den) - ratio(stat.b_num, stat.b_den)


def _rejects(stat, s1, s2, alternative):
    h, obs = _h(stat, s1, s2), Fraction(*stat.observed)
    return {"greater": h >= obs, "less": h <= obs, "two-sided": abs(h) >= abs(obs)}[alternative]


# F1-like: A = 2 s1 / (s1 + s2 + 3), B = (s1 + 1) / (s2 + 2); zero division gives 1/2.
STAT = dict(a_num=(0, 2, 0), a_den=(3, 1, 1), b_num=(1, 1, 0), b_den=(2, 0, 1), zero=(1, 2), observed=(-1, 7))


def test_ratio_statistic_round_trips_its_fields():
    stat = _core.RatioStatistic(**STAT)
    assert (tuple(stat.a_num), tuple(stat.a_den), tuple(stat.b_num), tuple(stat.b_den)) == (
        STAT["a_num"], STAT["a_den"], STAT["b_num"], STAT["b_den"])
    assert (tuple(stat.zero), tuple(stat.observed)) == (STAT["zero"], STAT["observed"])
    with pytest.raises(ValueError):
        _core.RatioStatistic(**{**STAT, "observed": (1, 0)})


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_ratio_count_and_pvalue_match_exact_fractions(alternative):
    rng = np.random.default_rng(7)
    stat = _core.RatioStatistic(**STAT)
    points = rng.integers(0, 30, (500, 2)).astype(np.int64)
    expected = sum(_rejects(stat, int(a), int(b), alternative) for a, b in points)
    assert _core.ratio_count(points, stat, alternative) == expected

    offset = (2, 5)
    pmf = rng.random((9, 13))
    pmf /= pmf.sum()
    exact = sum(Fraction(float(pmf[i, j])) for i, j in itertools.product(range(9), range(13))
                if _rejects(stat, offset[0] + i, offset[1] + j, alternative))
    p, log_p = _core.ratio_pvalue(offset, pmf, stat, alternative)
    assert p == pytest.approx(float(exact), rel=1e-14)
    # A strided view and a float32 copy are read correctly too (converted, then read in place).
    p_t, _ = _core.ratio_pvalue(offset, np.asfortranarray(pmf), stat, alternative)
    assert p_t == pytest.approx(float(exact), rel=1e-14)
    with pytest.raises(ValueError):
        _core.ratio_pvalue((2,), pmf, stat, alternative)


def test_pvalue_from_distribution_reads_strided_and_float32_pmfs():
    rng = np.random.default_rng(11)
    base = rng.random(400)
    pmf = base[::2] / base[::2].sum()  # non-contiguous view
    offset, observed, twice_mean = -50, -40, -101
    def exact(values):
        return float(sum(Fraction(float(v)) for i, v in enumerate(values)
                         if abs(2 * (offset + i) - twice_mean) >= abs(2 * observed - twice_mean)))
    p, _ = _core.pvalue_from_distribution(offset, pmf, observed, twice_mean, "two-sided")
    assert p == pytest.approx(exact(pmf), rel=1e-14)
    p32, _ = _core.pvalue_from_distribution(offset, pmf.astype(np.float32), observed, twice_mean, "two-sided")
    assert p32 == pytest.approx(exact(pmf.astype(np.float32)), rel=1e-12)


# -- one thread fan-out: results independent of the thread count -------------------------------


def test_resampling_does_not_depend_on_thread_count():
    rng = np.random.default_rng(5)
    stay = rng.integers(-5, 6, (3000, 2)).astype(np.int64)
    swap = rng.integers(-5, 6, (3000, 2)).astype(np.int64)
    sums = [_core.sample_sums(stay, swap, 1000, 42, t) for t in (1, 2, 5)]
    assert all(np.array_equal(sums[0], s) for s in sums[1:])
    stats = rng.random((2000, 3))
    boots = [_core.bootstrap_sums(stats, 301, 9, t) for t in (1, 2, 5)]  # 301 rows: a partial block
    assert all(np.array_equal(boots[0], b) for b in boots[1:])
    counts = [_core.bootstrap_counts(2000, 301, 9, t) for t in (1, 3)]
    assert np.array_equal(counts[0], counts[1])
    np.testing.assert_allclose(counts[0] @ stats, boots[0], rtol=1e-12)


# -- Ctrl-C, interpreter exit, fork() ------------------------------------------------------------

# Calls that run far longer uninterrupted than STOP_SECONDS (each over 25 s on 2 cores, the
# batch the shortest): a KeyboardInterrupt raised only once a call returns would overrun the bound.
LONG_CALLS = {
    "convolve_dp": "stay = rng.integers(0, 21, 100_000).astype(np.int64); call = lambda: _core.convolve_dp(stay, -stay)",
    "sample_sums": ("stay = rng.integers(0, 21, (1_000_000, 1)).astype(np.int64); "
                    "call = lambda: _core.sample_sums(stay, -stay, 100_000, 1, 2)"),
    "bootstrap_counts": "call = lambda: _core.bootstrap_counts(100_000, 20_000, 1, 2)",
    "batch_pvalues": ("scores = rng.integers(0, 21, (40, 100_000)); "
                      "pairs = np.array([(i, j) for i in range(40) for j in range(40) if i != j] * 200); "
                      "call = lambda: _core.batch_pvalues(scores, pairs, 'two-sided', 'auto', _core.PlanLimits(), "
                      "10_000, None, 2)"),
}


@pytest.mark.parametrize("name", sorted(LONG_CALLS))
def test_sigint_interrupts_a_long_call(name):
    elapsed, proc = interrupt_after(f"""
        import numpy as np
        from pairperm import _core
        rng = np.random.default_rng(0)
        {LONG_CALLS[name]}
        print("ready", flush=True)
        try:
            call()
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(3)
        print("finished", flush=True)
    """, delay=0.5)
    assert proc.stdout.strip() == "KeyboardInterrupt", proc.stderr
    assert proc.returncode == 3
    assert elapsed < STOP_SECONDS


def default_sigint() -> None:
    """In the child before exec: SIGINT back to its default action. A process started from a
    non-interactive shell's background job inherits SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler, so the signal these tests send would do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_after(body: str, delay: float, args: tuple = ()) -> tuple[float, subprocess.CompletedProcess]:
    """Run `body` in a fresh interpreter and send it SIGINT `delay` s after it prints "ready".
    Returns the seconds from the signal to the end of the process, and the process."""
    code = f"import sys\nsys.path.insert(0, {PACKAGE_PARENT!r})\n" + textwrap.dedent(body)
    with subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, preexec_fn=default_sigint) as proc:
        try:
            line = proc.stdout.readline().strip()
            if line != "ready":
                proc.wait(timeout=120)
                pytest.fail(f"the child never got ready ({line!r}):\n{proc.stderr.read()}")
            time.sleep(delay)
            proc.send_signal(signal.SIGINT)
            sent = time.perf_counter()
            out, err = proc.communicate(timeout=120)
            return time.perf_counter() - sent, subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        finally:
            proc.kill()
            proc.wait()


# Stopping takes one interrupt poll (well under 0.1 s); the bound leaves room for a loaded machine
# while staying far below the calls' uninterrupted run times (tens of seconds to minutes).
STOP_SECONDS = 10.0
# 20 real-valued systems: 190 pairs, each by importance sampling through compare() on
# compare_systems' thread pool, over a minute of work in all.
MANY_SYSTEMS = "rng = np.random.default_rng(0); s = {f's{i}': rng.random(20_000) + 0.05 * i for i in range(20)}"


def test_cancel_calls_stops_calls_on_other_threads_and_only_those_in_flight():
    import threading

    rng = np.random.default_rng(0)
    many = rng.integers(0, 21, (1_000_000, 1)).astype(np.int64)
    outcome = []

    def long_call():
        try:
            _core.sample_sums(many, -many, 100_000, 1, 1)  # tens of seconds uninterrupted
            outcome.append("finished")
        except KeyboardInterrupt:
            outcome.append("KeyboardInterrupt")

    thread = threading.Thread(target=long_call)
    thread.start()
    time.sleep(0.3)
    _core.cancel_calls()
    thread.join(timeout=STOP_SECONDS)
    assert not thread.is_alive()
    assert outcome == ["KeyboardInterrupt"]

    # Calls started after the cancellation run normally, on any thread.
    small = many[:1000]
    expected = _core.sample_sums(small, -small, 100, 2, 1)
    thread = threading.Thread(target=lambda: outcome.append(_core.sample_sums(small, -small, 100, 2, 1)))
    thread.start()
    thread.join()
    assert np.array_equal(outcome[-1], expected)

    # A task given a generation that has since been cancelled never starts its calls.
    generation = _core.cancel_generation()
    _core.cancel_calls()
    previous = _core.set_task_generation(generation)
    try:
        with pytest.raises(KeyboardInterrupt):
            _core.sample_sums(small, -small, 100, 2, 1)
    finally:
        assert _core.set_task_generation(previous) == generation
    assert previous is None
    assert np.array_equal(_core.sample_sums(small, -small, 100, 2, 1), expected)


def test_sigint_in_a_main_thread_call_also_stops_core_calls_on_other_threads():
    elapsed, proc = interrupt_after("""
        import threading
        import numpy as np
        from pairperm import _core
        rng = np.random.default_rng(0)
        stay = rng.integers(0, 21, 100_000).astype(np.int64)
        many = rng.integers(0, 21, (1_000_000, 1)).astype(np.int64)
        outcome = []
        def other():
            try:
                _core.sample_sums(many, -many, 100_000, 1, 1)
                outcome.append("finished")
            except KeyboardInterrupt:
                outcome.append("KeyboardInterrupt")
        thread = threading.Thread(target=other)
        thread.start()
        print("ready", flush=True)
        try:
            _core.convolve_dp(stay, -stay)
        except KeyboardInterrupt:
            thread.join()
            print("KeyboardInterrupt", *outcome, flush=True)
    """, delay=0.5)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["KeyboardInterrupt", "KeyboardInterrupt"]
    assert elapsed < STOP_SECONDS


def test_sigint_stops_compare_systems_on_its_thread_pool():
    elapsed, proc = interrupt_after(f"""
        import time
        import numpy as np
        import pairperm
        {MANY_SYSTEMS}
        print("ready", flush=True)
        try:
            pairperm.compare_systems(s, "mean", n_jobs=2, progress=False)
        except KeyboardInterrupt:
            # Nothing of the comparison may go on running in the background.
            cpu = time.process_time()
            time.sleep(0.5)
            print("KeyboardInterrupt", time.process_time() - cpu, flush=True)
            sys.exit(3)
        print("finished", flush=True)
    """, delay=1.5)
    assert proc.returncode == 3, proc.stderr
    word, cpu = proc.stdout.split()
    assert word == "KeyboardInterrupt"
    assert float(cpu) < 0.25
    assert elapsed < STOP_SECONDS + 0.5


def test_sigint_stops_the_compare_command(tmp_path):
    rng = np.random.default_rng(0)
    files = []
    for i in range(20):
        files.append(str(tmp_path / f"s{i}.txt"))
        np.savetxt(files[-1], rng.random(20_000) + 0.05 * i)
    elapsed, proc = interrupt_after("""
        from pairperm.cli import main
        print("ready", flush=True)
        sys.exit(main(["compare", "--metric", "mean", "--jobs", "2", *sys.argv[1:]]))
    """, delay=2.0, args=tuple(files))
    assert proc.returncode == 130
    assert proc.stdout == ""
    assert proc.stderr.strip() == "pairperm: interrupted"
    assert elapsed < STOP_SECONDS


@pytest.mark.parametrize("attempt", range(3))
def test_daemon_thread_in_a_core_call_does_not_abort_interpreter_exit(attempt):
    # Back-to-back short calls make it likely that one returns while the interpreter is
    # finalising: its thread must then end quietly instead of aborting the process.
    proc = run_script("""
        import threading, time
        import numpy as np
        from pairperm import _core
        rng = np.random.default_rng(0)
        stay = rng.integers(0, 21, 2000).astype(np.int64)
        many = rng.integers(0, 21, (20000, 1)).astype(np.int64)
        def work():
            while True:
                _core.convolve_dp(stay, -stay)
                _core.sample_sums(many, -many, 200, 1, 2)
        for _ in range(2):
            threading.Thread(target=work, daemon=True).start()
        time.sleep(0.05)
    """, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_interpreter_exit_does_not_wait_for_a_background_compare_systems():
    # 1,770 real-valued pairs take ~15 s on the pool of compare_systems (2 cores); a program whose
    # daemon thread is running them ends when its main thread does, as with monte_carlo_test.
    proc = subprocess.Popen([sys.executable, "-c", f"import sys\nsys.path.insert(0, {PACKAGE_PARENT!r})\n" + textwrap.dedent("""
        import threading, time
        import numpy as np
        import pairperm
        rng = np.random.default_rng(0)
        systems = {f"s{i}": rng.random(5000) + 0.001 * i for i in range(60)}
        done = []
        def work():
            pairperm.compare_systems(systems, "mean", n_jobs=2, progress=False)
            done.append(True)
        threading.Thread(target=work, daemon=True).start()
        time.sleep(1.0)
        print("done" if done else "exiting", flush=True)
    """)], stdout=subprocess.PIPE, text=True)
    with proc:
        line = proc.stdout.readline().strip()
        start = time.monotonic()
        proc.wait(timeout=120)
        elapsed = time.monotonic() - start
    assert line == "exiting"  # the comparison was still running
    assert proc.returncode == 0
    assert elapsed < 3.0, elapsed


def test_forked_children_never_hang_on_fft_state():
    proc = run_script("""
        import os, signal, threading
        import numpy as np
        from pairperm import _core
        rng = np.random.default_rng(1)
        stay = rng.integers(0, 21, 1000).astype(np.int64)
        mid = rng.integers(0, 21, 400).astype(np.int64)
        summary = _core.summarize(mid, -mid)
        stop = False
        def spin():
            while not stop:
                _core.convolve_fft(mid, -mid)
                _core.grouped_distribution(summary)
        threads = [threading.Thread(target=spin) for _ in range(2)]
        for t in threads:
            t.start()
        codes = []
        for _ in range(60):
            pid = os.fork()
            if pid == 0:
                signal.alarm(3)  # a child stuck on a lock is killed, and the parent sees it
                _core.convolve_fft(stay, -stay)
                _core.grouped_distribution(summary)
                os._exit(0)
            codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        stop = True
        for t in threads:
            t.join()
        print(sum(c != 0 for c in codes), len(codes))
    """, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "60"]


# Short calls of the public entry points that release the GIL, each in a loop on two daemon
# threads: some call returns while the interpreter is finalising, and its thread must end
# quietly. Sizes keep one call around 10-50 ms, so many calls end in that window.
DAEMON_CALLS = {
    "f1_test": "a, b = pairperm.datasets.ner_like(5000, seed=1); call = lambda: pairperm.f1_test(a, b)",
    "precision_test": ("a, b = pairperm.datasets.ner_like(5000, seed=1); "
                       "call = lambda: pairperm.precision_test(a, b)"),
    "f1_monte_carlo": ("a, b = pairperm.datasets.ner_like(5000, seed=1); "
                       "call = lambda: pairperm.f1_test(a, b, method='monte_carlo', n_resamples=20_000)"),
    "bootstrap_test": ("x = rng.random(5000); y = x + rng.normal(0, 0.1, 5000); "
                       "call = lambda: pairperm.bootstrap_test(x, y, n_resamples=2000)"),
    "compare_real": ("x = rng.random(3000); y = x + rng.normal(0.02, 0.3, 3000); "
                     "call = lambda: pairperm.compare(x, y, 'mean')"),
    "compare_systems": ("s = {f's{i}': rng.random(2000) + 0.05 * i for i in range(4)}; "
                        "call = lambda: pairperm.compare_systems(s, 'mean', n_jobs=2, progress=False)"),
    "compare_systems_batch": ("s = {f's{i}': rng.integers(0, 5, 20_000) for i in range(8)}; "
                              "call = lambda: pairperm.compare_systems(s, 'sum', n_jobs=2, progress=False)"),
}


# The pool of compare_systems and a core call with its own threads run in the quick set.
@pytest.mark.parametrize("name", quick_first(sorted(DAEMON_CALLS, key=lambda k: k not in ("compare_systems", "f1_test")),
                                            quick=2))
def test_daemon_threads_in_public_calls_do_not_abort_interpreter_exit(name):
    for _ in range(3):
        proc = run_script(f"""
            import threading, time
            import numpy as np
            import pairperm, pairperm.datasets
            rng = np.random.default_rng(0)
            {DAEMON_CALLS[name]}
            def work():
                while True:
                    call()
            for _ in range(2):
                threading.Thread(target=work, daemon=True).start()
            time.sleep(0.3)
        """, timeout=60)
        assert proc.returncode == 0, proc.stderr
