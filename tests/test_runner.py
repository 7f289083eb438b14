"""The runner's logic on a fake gem5 (tests/support/fake_gem5.py): what
re-simulates and what does not, failures, cancellation, locks, progress,
filtered runs. No gem5 needed; no timing asserted."""

from __future__ import annotations

import csv
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from support import fake_builds

from builders import cache, patches
from experiments import collect, gem5_commands, raw_outputs, runner, simulate, spec, stats

PROBE = """
name = "probe"
benchmark = "syscall_loop"
[matrix]
cores = ["cortex-a76"]
variants = ["baseline"]
features = ["", "pan"]
[[workloads]]
name = "invalid"
args = ["invalid", "10", "1000"]
iterations = 1000
"""


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_ENV, str(root))
    monkeypatch.setenv("FAKE_GEM5_LOG", str(tmp_path / "gem5-invocations.log"))
    for knob in ("FAKE_GEM5_SLEEP", "FAKE_GEM5_EXIT", "FAKE_GEM5_NO_OPS", "FAKE_GEM5_NO_L2",
                  "FAKE_GEM5_BAD_PARAM"):
        monkeypatch.delenv(knob, raising=False)
    return root


def _experiment(tmp_path: Path, text: str = PROBE) -> spec.Experiment:
    definitions = tmp_path / "definitions"
    definitions.mkdir(exist_ok=True)
    (definitions / "probe.toml").write_text(text)
    return spec.load("probe", definitions)


def _run(tmp_path: Path, experiment: spec.Experiment, results: str = "results",
         cpu: str | None = None) -> list[dict[str, str]]:
    builds = fake_builds.make(cache.cache_root())
    gem5 = simulate.Gem5Runner(simulate.RepoState.read(), progress_seconds=0.2)
    runner.run_experiments([experiment], builds, gem5, 2, tmp_path / results, cpu)
    with (tmp_path / results / "probe.csv").open() as handle:
        return list(csv.DictReader(handle))


def _simulations(tmp_path: Path) -> list[str]:
    log = tmp_path / "gem5-invocations.log"
    return log.read_text().splitlines() if log.is_file() else []


def test_a_run_boots_once_and_simulates_once(tmp_path: Path, cache_root: Path) -> None:
    rows = _run(tmp_path, _experiment(tmp_path))
    modes = [line.split()[1] for line in _simulations(tmp_path)]
    # One boot per feature set, one run each.
    assert sorted(modes) == ["boot", "boot", "measure", "measure"]
    assert {r["features"] for r in rows} == {"none", "pan"}
    by_metric = {(r["features"], r["metric"]): r for r in rows}
    # gem5 leaves out zero counters; the owner is there, so they read 0.
    assert float(by_metric[("pan", "l1d_misses")]["value"]) == 0
    assert float(by_metric[("pan", "ns_per_iteration")]["value"]) > 0
    row = by_metric[("pan", "cycles")]
    assert row["gem5_build"] == "fa4e9e5000000001" and row["checkpoint"]
    assert row["repo_commit"] and row["repo_dirty"] in ("True", "False")
    assert row["gem5_patches"] == patches.series_id([("0001-fake.patch", "0")])
    assert row["gem5_patches"].startswith("0001-0001:")
    assert row["kernel_source"] == "debian 6.12.fake"
    sidecar = cache.Entry("runs", row["run"], cache_root).path / "provenance.json"
    assert sidecar.is_file()


def test_metric_code_changes_the_csv_without_simulating(
        tmp_path: Path, cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    experiment = _experiment(tmp_path)
    _run(tmp_path, experiment)
    before = len(_simulations(tmp_path))
    derive = stats.region_metrics

    def with_one_more(dump: dict[str, float], iterations: int,
                      features: tuple[str, ...] = ()) -> list[stats.Metric]:
        return [*derive(dump, iterations, features), stats.Metric("new_metric", 1.0, "count")]

    monkeypatch.setattr(stats, "region_metrics", with_one_more)
    rows = _run(tmp_path, experiment)
    assert len(_simulations(tmp_path)) == before
    assert {r["metric"] for r in rows} >= {"new_metric", "cycles"}


def test_a_change_to_what_gem5_runs_simulates_again(tmp_path: Path, cache_root: Path) -> None:
    _run(tmp_path, _experiment(tmp_path))
    before = _simulations(tmp_path)
    # Another guest command line: same checkpoints, new runs.
    rows = _run(tmp_path, _experiment(tmp_path, PROBE.replace('"10", "1000"', '"10", "2000"')))
    after = _simulations(tmp_path)
    assert [line.split()[1] for line in after[len(before):]] == ["measure", "measure"]
    # A parameter override changes gem5's arguments too.
    _run(tmp_path, _experiment(tmp_path, PROBE.replace(
        'features = ["", "pan"]', 'features = ["pan"]\nparams = [["cpu.numROBEntries=64"]]')))
    assert len(_simulations(tmp_path)) == len(after) + 1
    assert {r["experiment"] for r in rows} == {"probe"}


def test_the_key_is_what_gem5_runs(tmp_path: Path) -> None:
    builds = fake_builds.make(tmp_path / "elsewhere")
    run = _spec_from(PROBE)
    boot = gem5_commands.boot_simulation(builds, run)
    simulation = gem5_commands.run_simulation(builds, run, boot.entry())
    inputs = simulation.key_inputs()
    assert inputs["gem5"] == builds.gem5.key and inputs["configs"] == builds.configs_digest
    argv = inputs["argv"]
    assert isinstance(argv, list)
    # Files appear as the keys of their content, never as host paths.
    assert f"kernel/{builds.kernels['baseline'].key}/vmlinux" in argv
    assert f"checkpoints/{boot.entry().key}/cpt" in argv
    assert not [a for a in argv if "elsewhere" in a]
    assert inputs["scripts"] == [run.guest_script()]
    # The experiment's name and the run's label are not in it.
    renamed = gem5_commands.run_simulation(builds, _spec_from(PROBE.replace("probe", "other")),
                                      boot.entry())
    assert renamed.entry().key == simulation.entry().key


class Recorder:
    """A run observer that notes what it was told, in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def started(self, out: Path) -> None:
        self.calls.append(f"started m5out={(out / 'm5out').is_dir()}")

    def stopped(self, out: Path) -> None:
        self.calls.append("stopped")

    def finished(self, out: Path) -> None:
        self.calls.append(f"finished stats={(out / 'm5out' / 'stats.txt').is_file()}")


def test_gem5_options_key_a_separate_entry_and_an_observer_sees_the_run(
        tmp_path: Path, cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    builds = fake_builds.make(cache.cache_root())
    run = _spec_from(PROBE)
    gem5 = simulate.Gem5Runner(simulate.RepoState("test", False), progress_seconds=0.2)
    boot = gem5.simulate(gem5_commands.boot_simulation(builds, run))
    plain = gem5_commands.run_simulation(builds, run, boot)
    debug = replace(plain, kind="traces", gem5_options=("--debug-flags=Exec",))
    assert "gem5_options" not in plain.key_inputs()
    assert debug.entry().key != plain.entry().key
    assert debug.command(tmp_path)[2] == "--debug-flags=Exec"
    recorder = Recorder()
    entry = gem5.simulate(debug, recorder)
    assert recorder.calls == ["started m5out=True", "stopped", "finished stats=True"]
    assert (entry.path / "provenance.json").is_file()
    # A failed gem5: the observer is stopped but never told it finished.
    monkeypatch.setenv("FAKE_GEM5_EXIT", "1")
    failed = Recorder()
    with pytest.raises(simulate.SimulationFailed):
        gem5.simulate(replace(debug, gem5_options=("--debug-flags=Exec,ExecFlags",)), failed)
    assert failed.calls == ["started m5out=True", "stopped"]


def _spec_from(text: str) -> spec.RunSpec:
    import tempfile

    import tomllib

    name = tomllib.loads(text)["name"]
    with tempfile.TemporaryDirectory() as scratch:
        (Path(scratch) / f"{name}.toml").write_text(text)
        return spec.load(name, Path(scratch)).runs[-1]


def test_code_hash_is_text_not_a_syntax_tree_dump() -> None:
    source = ('"""Module doc."""\n\n# why\nX = 1  # trailing\n\n\ndef f() -> int:\n'
              '    """Doc."""\n    return X\n')
    # Plain text: the same on every Python version (ast.dump is not).
    assert cache.python_code(source) == "X = 1\ndef f() -> int:\n    return X\n"


def test_a_model_gem5_rejects_stops_the_experiment_before_any_boot(
        tmp_path: Path, cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A path through a child object: the runner leaves it to gem5's check.
    bad = "cpu.branchPred.noSuchParameter=1"
    monkeypatch.setenv("FAKE_GEM5_BAD_PARAM", bad)
    probe = PROBE.replace('features = ["", "pan"]', f'features = ["pan"]\nparams = [["{bad}"]]')
    with pytest.raises(runner.ExperimentFailed,
                       match=r"(?s)status 2 .*BranchPredictor has no parameter"):
        _run(tmp_path, _experiment(tmp_path, probe))
    assert _simulations(tmp_path) == [], "nothing booted or ran after the failed check"
    assert not (tmp_path / "results" / "probe.csv").exists()


def test_an_edit_to_gem5_configs_changes_the_run_key(tmp_path: Path, cache_root: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """gem5 runs a snapshot of gem5-configs/ keyed by its code: a code edit
    gives every run another key; a comment or docstring edit does not."""
    import shutil

    from experiments import gem5_builds

    configs = tmp_path / "gem5-configs"
    shutil.copytree(gem5_builds.CONFIGS, configs,
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(gem5_builds, "CONFIGS", configs)
    run = _spec_from(PROBE)

    def key() -> str:
        builds = replace(fake_builds.make(cache.cache_root()),
                         configs=gem5_builds.snapshot_configs())
        return gem5_commands.run_simulation(builds, run, None).entry().key

    before = key()
    params = configs / "hardening" / "params.py"
    params.write_text(params.read_text().replace('"""``--param', '"""An edited docstring.\n\n``--param', 1)
                      + "\n# a comment added\n")
    assert key() == before
    params.write_text(params.read_text() + "\nEDITED = True\n")
    assert key() != before


def test_missing_counter_owner_and_missing_ops_are_errors(
        tmp_path: Path, cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GEM5_NO_L2", "1")
    with pytest.raises(runner.ExperimentFailed, match="l2_misses"):
        _run(tmp_path, _experiment(tmp_path))
    monkeypatch.delenv("FAKE_GEM5_NO_L2")
    monkeypatch.setenv("FAKE_GEM5_NO_OPS", "1")
    with pytest.raises(runner.ExperimentFailed, match="ops= line"):
        _run(tmp_path, _experiment(tmp_path, PROBE.replace('"1000"', '"1001"')))
    assert not (tmp_path / "results" / "probe.csv").exists()


def test_every_failure_is_in_the_summary(tmp_path: Path, cache_root: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    experiment = _experiment(tmp_path)
    builds = fake_builds.make(cache.cache_root())
    gem5 = simulate.Gem5Runner(simulate.RepoState.read())
    monkeypatch.setenv("FAKE_GEM5_EXIT", "4")
    with pytest.raises(runner.ExperimentFailed) as failure:
        runner.run_experiments([experiment], builds, gem5, 2, tmp_path / "results")
    message = str(failure.value)
    # Both boots fail (status 4), each reported with its meaning; no run starts.
    assert "panicked" in message and "SimulationFailed" in message
    assert not list((cache_root / "checkpoints").glob("*/manifest.json"))
    assert not list((cache_root / "checkpoints").glob(".*partial*"))


def test_failed_runs_are_all_listed(tmp_path: Path, cache_root: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    experiment = _experiment(tmp_path)
    builds = fake_builds.make(cache.cache_root())
    gem5 = simulate.Gem5Runner(simulate.RepoState.read())
    for run in experiment.runs:  # the checkpoints exist
        gem5.simulate(gem5_commands.boot_simulation(builds, run))
    monkeypatch.setenv("FAKE_GEM5_NO_OPS", "1")
    with pytest.raises(runner.ExperimentFailed, match=r"(?s)2 failed.*\[none\].*\[pan\]"):
        runner.run_experiments([experiment], builds, gem5, 2, tmp_path / "results")


def test_filtered_run_merges_into_the_csv(tmp_path: Path, cache_root: Path) -> None:
    results = tmp_path / "elsewhere"
    existing = [{"experiment": "probe", "run": "x", "cpu": "atomic", "metric": "verdict",
                 "value": "pass"}]
    collect.write_csv(existing, results / "probe.csv")
    rows = _run(tmp_path, _experiment(tmp_path), results="elsewhere", cpu="o3")
    assert [r["cpu"] for r in rows if r["run"] == "x"] == ["atomic"]
    assert {r["cpu"] for r in rows} == {"atomic", "o3"}
    # Run again: the o3 rows are replaced, not added twice.
    again = _run(tmp_path, _experiment(tmp_path), results="elsewhere", cpu="o3")
    assert len(again) == len(rows)
    assert not (tmp_path / "results").exists()


def test_one_layout_sample_at_a_time_merges_into_the_csv(tmp_path: Path,
                                                        cache_root: Path) -> None:
    # A long experiment made a sample at a time (one session or machine each)
    # ends as the CSV of the whole experiment, each sample's rows once.
    experiment = spec.with_samples(_experiment(tmp_path), 2)
    second = _run(tmp_path, spec.only_sample(experiment, 1))
    assert {r["sample"] for r in second} == {"1"}
    both = _run(tmp_path, spec.only_sample(experiment, 0))
    assert {r["sample"] for r in both} == {"0", "1"}
    assert [r for r in both if r["sample"] == "1"] == second
    again = _run(tmp_path, spec.only_sample(experiment, 1))
    assert sorted(map(str, again)) == sorted(map(str, both))
    with pytest.raises(spec.BadExperiment, match="no layout sample 2; its samples: 0, 1"):
        spec.only_sample(experiment, 2)


def test_one_feature_set_at_a_time_merges_into_the_csv(tmp_path: Path,
                                                        cache_root: Path) -> None:
    # A check made an arm at a time (as its kernels are built): each run's
    # rows once, the other arm's kept.
    experiment = _experiment(tmp_path)
    pan = _run(tmp_path, spec.only_runs(experiment, features=["pan"]))
    assert {r["features"] for r in pan} == {"pan"}
    both = _run(tmp_path, spec.only_runs(experiment, features=["none"]))
    assert {r["features"] for r in both} == {"none", "pan"}
    assert [r for r in both if r["features"] == "pan"] == pan
    again = _run(tmp_path, spec.only_runs(experiment, features=["pan"]))
    assert sorted(map(str, again)) == sorted(map(str, both))


def test_progress_lines_and_run_start_lines(tmp_path: Path, cache_root: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("FAKE_GEM5_SLEEP", "1")
    caplog.set_level(logging.INFO)
    _run(tmp_path, _experiment(tmp_path))
    messages = [r.getMessage() for r in caplog.records]
    assert any("2 runs: 0 cached, 2 to simulate" in m for m in messages)
    assert sum("start: cortex-a76" in m for m in messages) == 2
    assert any("ms simulated" in m and "of the tick limit" in m and "instructions/host s" in m
               for m in messages)
    caplog.clear()
    monkeypatch.delenv("FAKE_GEM5_SLEEP")
    _run(tmp_path, _experiment(tmp_path))
    messages = [r.getMessage() for r in caplog.records]
    assert any("2 runs: 2 cached, 0 to simulate" in m for m in messages)
    assert sum("cached: cortex-a76" in m for m in messages) == 2


def test_progress_describes_share_and_time_left() -> None:
    progress = simulate.Progress(tick=2 * 10**9 + 10**9, start=10**9, limit=8 * 10**9,
                                 instructions=4_000_000)
    text = progress.describe(host_seconds=60.0)
    assert text.startswith("2.00 ms simulated (25.0% of the tick limit), 4.0 M instructions")
    assert "67 k instructions/host s" in text and "at most 3 min to the limit" in text


def test_two_runners_at_once_simulate_each_run_once(tmp_path: Path, cache_root: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GEM5_SLEEP", "0.5")
    experiment = _experiment(tmp_path)
    errors: list[BaseException] = []

    def one(results: str) -> None:
        try:
            _run(tmp_path, experiment, results=results)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=one, args=(f"results-{n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(line.split()[1] for line in _simulations(tmp_path)) == [
        "boot", "boot", "measure", "measure"]


def test_entry_lock_makes_one_builder(tmp_path: Path) -> None:
    entry = cache.Entry("disk", "0123456789abcdef", tmp_path)
    built: list[int] = []

    def build(n: int) -> None:
        with entry.lock():
            if entry.exists():
                return
            with entry.staging({"n": n}) as out:
                time.sleep(0.2)
                (out / "image").write_text(str(n))
                built.append(n)

    threads = [threading.Thread(target=build, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 1 and entry.exists()


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_term_stops_everything_and_keeps_nothing(
        tmp_path: Path, cache_root: Path, stop: signal.Signals) -> None:
    definitions = tmp_path / "definitions"
    definitions.mkdir()
    (definitions / "probe.toml").write_text(PROBE)
    env = {**os.environ, "FAKE_GEM5_SLEEP": "60"}
    harness = Path(fake_builds.__file__)
    process = subprocess.Popen([sys.executable, str(harness), str(definitions), "probe",
                                str(tmp_path / "results")], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = tmp_path / "gem5-invocations.log"
    deadline = time.monotonic() + 60
    while not (log.is_file() and len(log.read_text().splitlines()) >= 2):
        assert time.monotonic() < deadline, "the fake gem5 never started"
        assert process.poll() is None, process.communicate()[0]
        time.sleep(0.1)
    process.send_signal(stop)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 130, output
    pids = [int(line.split()[0]) for line in log.read_text().splitlines()]
    assert len(pids) == 2  # both boots ran; nothing queued was started after
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not [p for p in cache_root.rglob("*") if ".partial-" in p.name]
    assert not list((cache_root / "checkpoints").glob("*/manifest.json"))
    assert not list((cache_root / "runs").glob("*/manifest.json"))
    assert not (tmp_path / "results" / "probe.csv").exists()


def test_a_killed_runner_leaves_nothing_and_the_rerun_completes(tmp_path: Path,
                                                                cache_root: Path) -> None:
    definitions = tmp_path / "definitions"
    definitions.mkdir()
    (definitions / "probe.toml").write_text(PROBE)
    harness = [sys.executable, str(Path(fake_builds.__file__)), str(definitions), "probe",
               str(tmp_path / "results")]
    process = subprocess.Popen(harness, env={**os.environ, "FAKE_GEM5_SLEEP": "60"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = tmp_path / "gem5-invocations.log"
    deadline = time.monotonic() + 60
    while not (log.is_file() and len(log.read_text().splitlines()) >= 2):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)
    process.kill()  # SIGKILL: no handler runs
    process.wait()
    pids = [int(line.split()[0]) for line in log.read_text().splitlines()]
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids):
        assert time.monotonic() < deadline, "gem5 outlived its runner"
        time.sleep(0.1)
    assert not list(cache_root.glob("checkpoints/*/manifest.json"))
    # The next run sweeps the dead run's scratch directories and completes.
    finished = subprocess.run(harness, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert not [p for p in cache_root.rglob("*") if ".partial-" in p.name]
    assert (tmp_path / "results" / "probe.csv").is_file()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead but still listed.
    status = Path(f"/proc/{pid}/status")
    return status.is_file() and "State:\tZ" not in status.read_text()


def _row(workload: str, sample: int, value: str, cpu: str = "o3") -> dict[str, object]:
    return {"experiment": "probe", "run": f"key-{value}", "cpu": cpu,
            "core": "cortex-a76", "cores": "1", "nodes": "1", "variant": "baseline",
            "kernel_args": "", "features": "pan", "params": "", "workload": workload,
            "sample": str(sample), "metric": "cycles", "value": value}


@pytest.mark.parametrize("cpu_filter", [None, "o3"])
def test_a_quick_part_replaces_only_the_rows_of_the_runs_it_made(
        tmp_path: Path, cpu_filter: str | None) -> None:
    """Also with --cpu: a quick part of one CPU type keeps that type's other
    runs (as the results file and, the same way, its canary file)."""
    path = tmp_path / "probe.csv"
    collect.write_csv([_row("invalid", 0, "1"), _row("invalid", 1, "2"),
                       _row("getppid", 0, "3"), _row("invalid", 0, "4", cpu="atomic")], path)
    collect.merge_into(path, [_row("invalid", 0, "9")], cpu_filter, partial=True)
    assert [r["value"] for r in collect.read_csv(path)] == ["2", "3", "4", "9"]


def test_a_cpu_filtered_run_replaces_every_row_of_its_cpu_type(tmp_path: Path) -> None:
    path = tmp_path / "probe.csv"
    collect.write_csv([_row("invalid", 0, "1"), _row("getppid", 0, "3"),
                       _row("invalid", 0, "4", cpu="atomic")], path)
    collect.merge_into(path, [_row("invalid", 0, "9")], "o3", partial=False)
    assert [r["value"] for r in collect.read_csv(path)] == ["4", "9"]


def test_a_filtered_run_refuses_to_merge_into_an_old_format_file(tmp_path: Path) -> None:
    old = [{"experiment": "probe", "run": "x", "metric": "cycles", "value": "1"}]
    with pytest.raises(collect.BadOutput, match="lacks the columns .*cpu.*whole experiment"):
        collect.merged(old, [], lambda row: row["cpu"] == "o3", tmp_path / "probe.csv")


def test_waiting_for_a_lock_gives_up_when_cancelled(tmp_path: Path) -> None:
    entry = cache.Entry("runs", "00000000000000aa", tmp_path)
    cancelled = threading.Event()
    outcome: list[str] = []

    def waiter() -> None:
        try:
            with entry.lock(cancelled=cancelled.is_set):
                outcome.append("locked")
        except cache.Interrupted:
            outcome.append("gave up")

    with entry.lock():
        thread = threading.Thread(target=waiter)
        thread.start()
        time.sleep(0.3)
        cancelled.set()
        thread.join(timeout=10)
    assert outcome == ["gave up"]


def test_the_slurm_backend_makes_the_local_backends_csv(
        tmp_path: Path, cache_root: Path, monkeypatch: pytest.MonkeyPatch,
        local_slurm: Path) -> None:
    from experiments import backends

    experiment = _experiment(tmp_path)
    local = _run(tmp_path, experiment, results="local")
    # A second cache: the Slurm run must simulate everything itself.
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "slurm-cache"))
    builds = fake_builds.make(cache.cache_root())
    lines: list[str] = []
    gem5 = simulate.Gem5Runner(
        simulate.RepoState.read(), progress_seconds=0.5, report=lines.append,
        backend=backends.SlurmBackend(backends.SlurmOptions(poll_seconds=0.2)))
    runner.run_experiments([experiment], builds, gem5, 4, tmp_path / "slurm-results")
    with (tmp_path / "slurm-results" / "probe.csv").open() as handle:
        remote = list(csv.DictReader(handle))
    host_only = collect.HOST_TIMING

    def comparable(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        return sorted(({k: v for k, v in r.items() if k not in host_only} for r in rows),
                      key=lambda r: (r["run"], r["metric"]))

    assert comparable(remote) == comparable(local)
    # Everything ran as jobs: 2 model checks, 2 boots, 2 runs in the Slurm cache.
    assert len(list((tmp_path / "slurm-cache" / "runs").glob("*/manifest.json"))) == 2
    assert not list((tmp_path / "slurm-cache").rglob(backends.EXIT_STATUS))


def test_fast_forward_rows_say_so_and_split_the_host_time(tmp_path: Path,
                                                         cache_root: Path) -> None:
    full = _run(tmp_path, _experiment(tmp_path), "full")
    fast = _run(tmp_path, spec.with_detail(_experiment(tmp_path), "fast-forward"), "fast")
    assert {r["detail"] for r in full} == {"full"}
    assert {r["detail"] for r in fast} == {"fast-forward"}
    # Its own simulations (the detail is in the run key), the two boots shared.
    assert {r["run"] for r in full}.isdisjoint({r["run"] for r in fast})
    assert sorted(line.split()[1] for line in _simulations(tmp_path)) == [
        "boot"] * 2 + ["measure"] * 4
    # The region's counters are the core model's (detailed_cores), the
    # atomic CPU's (idle in the region) add nothing.
    instructions = {r["value"] for r in fast if r["metric"] == "instructions"}
    assert instructions == {"50000.0"}
    # setup, then the detailed part less the region's 0.5 s, the region, teardown.
    assert {r["host_split"] for r in fast} == {
        "setup=2.0;warmup=1.0;region=0.5;teardown=0.2"}


def test_a_guest_that_never_asks_for_detail_fails_with_its_meaning(
        tmp_path: Path, cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GEM5_EXIT", "7")
    experiment = spec.with_detail(_experiment(tmp_path), "fast-forward")
    experiment = replace(experiment, runs=experiment.runs[:1])
    builds = fake_builds.make(cache.cache_root())
    gem5 = simulate.Gem5Runner(simulate.RepoState.read())
    with pytest.raises(runner.ExperimentFailed) as failure:
        runner.run_experiments([experiment], builds, gem5, 1, tmp_path / "results")
    # The boot fails first here (every invocation exits 7): the meaning is named,
    # for a guest that never asks and for one that asks after its region began.
    assert "never asked for detail" in str(failure.value)
    assert "after the region began" in str(failure.value)


CANARY_PROBE = PROBE.replace('benchmark = "syscall_loop"', 'benchmark = "syscall_loop"\n'
                             'detail = "fast-forward"\n[canary]\nfeatures = "pan"')


def test_a_canary_is_made_in_full_detail_beside_its_twin_and_compare_rechecks_it(
        tmp_path: Path, cache_root: Path) -> None:
    from experiments import canary, compare, folders

    reference = _run(tmp_path, _experiment(tmp_path), "reference")
    experiment = _experiment(tmp_path, CANARY_PROBE)
    assert [(r.features, r.detail) for r in experiment.canary] == [(("pan",), "full")]
    rows = _run(tmp_path, experiment, "rerun")
    assert {r["detail"] for r in rows} == {"fast-forward"}
    canary_rows = collect.read_csv(folders.canary_csv(tmp_path / "rerun", "probe"))
    assert {(r["features"], r["detail"]) for r in canary_rows} == {("pan", "full")}
    # The canary is the reference's own full-detail run: the same simulation.
    assert {r["run"] for r in canary_rows} == {r["run"] for r in reference
                                              if r["features"] == "pan"}
    tolerances = compare.Tolerances.read()
    text, held = canary.check(tmp_path / "reference", tmp_path / "rerun", tolerances)
    assert held, text
    assert text.startswith("canary probe: ")
    # A fast-forward twin whose work per operation moved fails the re-check.
    moved = [{**r, "value": "999"} if r["metric"] == "instructions_per_iteration" else r
             for r in rows]
    collect.write_csv(moved, tmp_path / "rerun" / "probe.csv")
    text, held = canary.check(tmp_path / "reference", tmp_path / "rerun", tolerances)
    assert not held and "moved: " in text
    collect.write_csv(rows, tmp_path / "rerun" / "probe.csv")
    # A check that compares nothing fails: the reference lacks the canary's run,
    # or holds fast-forward rows only, or the re-run lacks the twins.
    for where, kept, expected in (
            ("reference", [r for r in reference if r["features"] != "pan"],
             "1 canary runs are not in"),
            ("reference", rows, "was not made in full detail"),
            ("rerun", [r for r in rows if r["features"] != "pan"],
             "1 canary runs have no fast-forward twin")):
        broken = tmp_path / f"broken-{where}"
        sources = {"reference": tmp_path / "reference", "rerun": tmp_path / "rerun"}
        shutil.copytree(sources[where], broken)
        collect.write_csv(kept, broken / "probe.csv")
        sources[where] = broken
        text, held = canary.check(sources["reference"], sources["rerun"], tolerances)
        assert not held and expected in text, text
        shutil.rmtree(broken)
    # The same experiment again in full detail: no twins, so no canary is left.
    _run(tmp_path, spec.with_detail(experiment, "full"), "rerun")
    assert not folders.canary_csv(tmp_path / "rerun", "probe").exists()


def test_a_canary_must_select_a_fast_forward_run(tmp_path: Path) -> None:
    full_detail = CANARY_PROBE.replace('detail = "fast-forward"\n', "")
    with pytest.raises(spec.BadExperiment, match=r"\[canary\] needs detail = \"fast-forward\""):
        _experiment(tmp_path, full_detail)
    with pytest.raises(spec.BadExperiment, match=r"\[canary\]: features 'pac' is not in the "
                       r"experiment \(valid: '', 'pan'\)"):
        _experiment(tmp_path, CANARY_PROBE.replace('features = "pan"\n[matrix]',
                                                   'features = "pac"\n[matrix]'))
    with pytest.raises(spec.BadExperiment, match=r"\[canary\] \(workload = 'invalid'\) "
                       r"selects no detailed run left after \[\[exclude\]\]"):
        _experiment(tmp_path, CANARY_PROBE.replace(
            'features = "pan"\n[matrix]', 'workload = "invalid"\n[matrix]') +
            '[[exclude]]\nworkload = "invalid"\n[[workloads]]\nname = "other"\n'
            'args = ["getppid", "10", "1000"]\niterations = 1000\n')
    # A derived run (another core, a --param) keeps no canary; --detail full drops it.
    experiment = _experiment(tmp_path, CANARY_PROBE)
    assert not spec.derive(experiment, ["neoverse-n1"]).canary
    assert not spec.with_detail(experiment, "full").canary
    # Layout samples: the canary is sample 0's twin only, whatever the count.
    assert [r.sample for r in spec.with_samples(experiment, 3).canary] == [0]
    assert not spec.only_cpu(experiment, "atomic").canary


def test_a_crash_is_reported_by_gem5s_own_words_not_only_its_backtrace(tmp_path: Path) -> None:
    simerr = tmp_path / "simerr.txt"
    backtrace = [f"/lib/libpython3.11.so.1.0(+0x{i:x})[0x7f49d3b0a7d3]" for i in range(20)]
    simerr.write_text("\n".join([
        "warn: something harmless",
        "gem5.opt: src/cpu/o3/dep_graph.hh:230: void remove(): Assertion `curr != NULL' failed.",
        "Program aborted at tick 110864657034",
        *backtrace]) + "\n")
    assert raw_outputs.gem5_errors(simerr) == (
        "gem5.opt: src/cpu/o3/dep_graph.hh:230: void remove(): Assertion `curr != NULL' failed.")
    assert "Assertion" not in raw_outputs.tail(simerr, 15)
    simerr.write_text("src/arch/arm/mmu.cc:100: panic: no such thing\n")
    assert raw_outputs.gem5_errors(simerr) == "src/arch/arm/mmu.cc:100: panic: no such thing"
    simerr.write_text("\n".join(backtrace))
    assert raw_outputs.gem5_errors(simerr) == ""
    assert raw_outputs.gem5_errors(tmp_path / "absent.txt") == ""
