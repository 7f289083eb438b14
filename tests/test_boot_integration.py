"""Boot the baseline kernel in gem5 (atomic CPU) and run a guest script.

Needs gem5 and the baseline kernel in the build cache ('make gem5 kernels');
without them it is skipped with one line saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from experiments import collect, gem5_commands, raw_outputs, simulate, spec
from experiments.gem5_builds import Builds
from experiments.gem5_commands import GuestScript
from experiments.raw_outputs import SimulationFailed
from experiments.spec import catalog
from support.real_gem5 import rows_by_metric, run_definition, run_gem5
from support.skips import missing_build

pytestmark = pytest.mark.needs_gem5
MAX_TICKS = 5 * 10**12


@pytest.fixture(scope="module")
def builds(cached_builds_or_skip: Callable[..., Builds]) -> Builds:
    return cached_builds_or_skip("baseline")


def _gem5(builds: Builds, out: Path, mode: str, *args: gem5_commands.Arg) -> str:
    """Run gem5 once into ``out`` (no cache); the guest console."""
    return run_gem5(builds, "baseline", out, mode, *args, max_ticks=MAX_TICKS,
                    label="boot test")


def test_atomic_boot_runs_guest_script(builds: Builds, tmp_path: Path) -> None:
    console = _gem5(builds, tmp_path, "direct", "--cpu", "atomic", "--max-ticks", str(MAX_TICKS),
                    "--script", GuestScript("echo guest-says-$((6 * 7))\n"
                                            "grep -c processor /proc/cpuinfo\n"))
    assert "init: up" in console
    assert "guest-says-42" in console
    assert "host script exited with status 0" in console


def test_guest_keeps_time_with_the_architected_counter(builds: Builds, tmp_path: Path) -> None:
    """Without the timer frames granted to the non-secure world (gem5 patch
    0018) Linux falls back to jiffies: a 250 Hz scheduler clock."""
    console = _gem5(builds, tmp_path, "direct", "--cpu", "atomic", "--max-ticks", str(MAX_TICKS),
                    "--script", GuestScript(
                        "echo clock=$(cat /sys/devices/system/clocksource/clocksource0/"
                        "current_clocksource)\n"))
    assert "clock=arch_sys_counter" in console
    assert "Unable to find a suitable frame" not in console


def test_four_cores_boot_and_come_online(builds: Builds, tmp_path: Path) -> None:
    console = _gem5(builds, tmp_path, "direct", "--cpu", "atomic", "--cores", "4",
                    "--max-ticks", str(MAX_TICKS),
                    "--script", GuestScript("echo online=$(cat /sys/devices/system/cpu/online)\n"))
    assert "online=0-3" in console
    assert "host script exited with status 0" in console


def test_failing_guest_script_is_an_error(builds: Builds, tmp_path: Path) -> None:
    with pytest.raises(SimulationFailed, match="(?s)status 3.*about-to-fail"):
        _gem5(builds, tmp_path, "direct", "--cpu", "atomic", "--max-ticks", str(MAX_TICKS),
              "--script", GuestScript("echo about-to-fail\nexit 7\n"))


def test_tick_limit_counts_from_the_start(builds: Builds, tmp_path: Path) -> None:
    # 2 ms of guest time is far short of a boot: the limit stops it (status 5),
    # after progress checks every simulated millisecond.
    with pytest.raises(SimulationFailed, match="status 5"):
        _gem5(builds, tmp_path, "direct", "--cpu", "atomic", "--max-ticks", str(2 * 10**9),
              "--script", GuestScript("true\n"))


def _check_model(builds: Builds, tmp_path: Path, *args: str) -> None:
    _gem5(builds, tmp_path, "measure", "--check", "--checkpoint", str(tmp_path), "--script",
          GuestScript("true\n"), *args)


@pytest.mark.parametrize("core", list(catalog.CORE_MODULES))
def test_every_core_model_instantiates(builds: Builds, tmp_path: Path,
                                       core: str) -> None:
    _check_model(builds, tmp_path, "--core", core)


def test_unknown_parameter_names_the_valid_ones(builds: Builds,
                                               tmp_path: Path) -> None:
    with pytest.raises(SimulationFailed,
                       match="(?s)status 2.*no parameter 'numROBEntrys'.*numROBEntries"):
        _check_model(builds, tmp_path, "--core", "cortex-a76",
                     "--param", "cpu.numROBEntrys=192")


@pytest.mark.parametrize("feature", list(catalog.FEATURES))
def test_every_feature_instantiates(builds: Builds, tmp_path: Path,
                                    feature: str) -> None:
    _check_model(builds, tmp_path, "--core", "neoverse-v2", "--features", feature)


def test_linux_reports_mte_and_poe(builds: Builds, tmp_path: Path) -> None:
    # MTE and POE exist only through our gem5 patches 0005-0008; the kernel
    # lists a hardware capability only after its own probe of the ID registers.
    console = _gem5(builds, tmp_path, "direct", "--cpu", "atomic", "--features", "mte,poe",
                    "--max-ticks", str(MAX_TICKS),
                    "--script", GuestScript("grep -m1 Features /proc/cpuinfo\n"))
    features = next(line for line in console.splitlines()
                    if line.startswith("Features")).split()
    assert {"mte", "mte3", "poe"} <= set(features)


def test_sysreg_timing_table_instantiates(builds: Builds, tmp_path: Path) -> None:
    _check_model(builds, tmp_path, "--core", "cortex-a76",
                 "--param", "sysreg.ctx.regs=contextidr_el1+tpidr_el1",
                 "--param", "sysreg.ctx.write_serialize=false",
                 "--param", "sysreg.isb_latency=4")


def test_unsafe_sysreg_relaxation_is_refused(builds: Builds, tmp_path: Path) -> None:
    # PSTATE.PAN is read by the MMU on every access: its write must stay ordered.
    with pytest.raises(SimulationFailed, match="(?s)MSR pan must stay serializing"):
        _check_model(builds, tmp_path, "--core", "cortex-a76",
                     "--param", "sysreg.pstate.regs=pan",
                     "--param", "sysreg.pstate.write_serialize=false")


def test_unknown_system_register_is_refused(builds: Builds, tmp_path: Path) -> None:
    # A class at gem5's own timing installs nothing; one that changes the
    # timing is handed to gem5, which checks every register name.
    with pytest.raises(SimulationFailed, match="(?s)unknown system register 'sctlr_el9'"):
        _check_model(builds, tmp_path, "--core", "cortex-a76",
                     "--param", "sysreg.x.regs=sctlr_el9",
                     "--param", "sysreg.x.write_latency=1")


REAL_PROBE = """
name = "probe"
benchmark = "syscall_loop"
[matrix]
cores = ["cortex-a76"]
variants = ["baseline"]
features = ["pan"]
[[workloads]]
name = "invalid"
args = ["invalid", "20", "200"]
iterations = 200
"""


def test_one_real_run_through_the_runner(builds: Builds, tmp_path: Path) -> None:
    target = run_definition(REAL_PROBE, builds, tmp_path)
    rows = rows_by_metric(target)
    assert float(rows["cycles_per_iteration"]["value"]) > 0
    assert rows["instructions"]["gem5_build"] == builds.gem5.key
    assert rows["instructions"]["checkpoint"]
    # Collected again from the same raw outputs: the same rows.
    again = run_definition(REAL_PROBE, builds, tmp_path, results="again")
    assert again.read_text() == target.read_text()


def test_fast_forward_switches_at_the_request_and_measures_what_full_detail_does(
        builds: Builds, tmp_path: Path) -> None:
    """The probe's one run both ways, through the runner: the fast-forward run
    switches to the core model once and back once, its region is all on the
    core model, and its metrics are the full-detail run's (same instructions,
    time within 0.1%)."""
    import csv

    from experiments import runner

    (tmp_path / "probe.toml").write_text(REAL_PROBE)
    experiment = spec.load("probe", tmp_path)
    gem5 = simulate.Gem5Runner(simulate.RepoState.read())
    rows = {}
    for detail in ("full", "fast-forward"):
        (target,) = runner.run_experiments([spec.with_detail(experiment, detail)], builds,
                                           gem5, 1, tmp_path / detail)
        with target.open() as handle:
            rows[detail] = {r["metric"]: r for r in csv.DictReader(handle)}
    fast, full = rows["fast-forward"], rows["full"]
    assert {r["detail"] for r in fast.values()} == {"fast-forward"}
    assert fast["instructions"]["value"] == full["instructions"]["value"]
    assert float(fast["ns_per_iteration"]["value"]) == pytest.approx(
        float(full["ns_per_iteration"]["value"]), rel=1e-3)
    from builders import cache

    raw = cache.Entry(kind="runs", key=fast["instructions"]["run"], root=cache.cache_root())
    log = raw_outputs.detail(raw.path)
    assert [(r["kind"], r["switched"]) for r in log["requests"]] == [
        ("begin", True), ("end", True)]
    assert fast["instructions"]["host_split"].startswith("setup=")


def test_a_real_canary_is_the_full_detail_run_and_its_twin_holds(builds: Builds,
                                                                 tmp_path: Path) -> None:
    """The probe with fast-forward and its one run as the canary: the canary
    is the full-detail run itself (one simulation, one key), and the
    fast-forward twin commits its instructions."""
    from experiments import canary, compare, folders, runner

    (tmp_path / "probe.toml").write_text(REAL_PROBE)
    full = spec.load("probe", tmp_path)
    (tmp_path / "probe.toml").write_text(REAL_PROBE.replace(
        'benchmark = "syscall_loop"',
        'benchmark = "syscall_loop"\ndetail = "fast-forward"\n[canary]\nworkload = "invalid"'))
    fast = spec.load("probe", tmp_path)
    gem5 = simulate.Gem5Runner(simulate.RepoState.read())
    runner.run_experiments([full], builds, gem5, 1, tmp_path / "reference")
    runner.run_experiments([fast], builds, gem5, 1, tmp_path / "rerun")
    reference = collect.read_csv(tmp_path / "reference" / "probe.csv")
    canary_rows = collect.read_csv(folders.canary_csv(tmp_path / "rerun", "probe"))
    assert {r["run"] for r in canary_rows} == {r["run"] for r in reference}
    text, held = canary.check(tmp_path / "reference", tmp_path / "rerun",
                              compare.Tolerances.read())
    assert held, text


def test_one_real_run_through_slurm_makes_the_local_csv(
        builds: Builds, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        request: pytest.FixtureRequest) -> None:
    import csv

    from builders import cache
    from experiments import backends, runner, spec

    (tmp_path / "probe.toml").write_text(REAL_PROBE)
    experiment = spec.load("probe", tmp_path)
    (local,) = runner.run_experiments([experiment], builds,
                                      simulate.Gem5Runner(simulate.RepoState.read()), 1,
                                      tmp_path / "local")
    # Started after the local run: that run must not become a Slurm job.
    request.getfixturevalue("local_slurm")
    # A cache that shares the builds but not a checkpoint or a run, so the
    # boot and the run are simulated again, as Slurm jobs.
    shared = cache.cache_root()
    slurm_cache = tmp_path / "slurm-cache"
    slurm_cache.mkdir()
    for kind in ("gem5", "gem5-tools", "kernel", "disk", "gem5-configs"):
        (slurm_cache / kind).symlink_to(shared / kind)
    monkeypatch.setenv(cache.CACHE_ENV, str(slurm_cache))
    gem5 = simulate.Gem5Runner(
        simulate.RepoState.read(),
        backend=backends.SlurmBackend(backends.SlurmOptions(poll_seconds=1.0)))
    (remote,) = runner.run_experiments([experiment], builds, gem5, 2, tmp_path / "slurm")
    # What differs between two makings of one run: the host's time, and the
    # commit checked out when the local run was first cached.
    from experiments import collect

    when_made = (*collect.HOST_TIMING, "repo_commit", "repo_dirty")

    def comparable(target: Path) -> list[dict[str, str]]:
        with target.open() as handle:
            rows = [{k: v for k, v in r.items() if k not in when_made}
                    for r in csv.DictReader(handle)]
        return sorted(rows, key=lambda r: (r["run"], r["metric"]))

    assert comparable(remote) == comparable(local)
    assert list((slurm_cache / "checkpoints").glob("*/manifest.json"))
    assert len(list((slurm_cache / "runs").glob("*/manifest.json"))) == 1


HOST_STATS = ("hostSeconds", "hostTickRate", "hostMemory", "hostInstRate", "hostOpRate")


def _simulated_lines(stats_txt: Path) -> list[str]:
    return [line for line in stats_txt.read_text().splitlines()
            if not line.startswith(HOST_STATS)]


def _probe_run(builds: Builds, tmp_path: Path) -> Path:
    """The raw outputs (cache entry) of REAL_PROBE's one O3 run."""
    from builders import cache

    run_key = rows_by_metric(run_definition(REAL_PROBE, builds, tmp_path))["instructions"]["run"]
    return cache.Entry(raw_outputs.RUNS, run_key, cache.cache_root()).path


def _rerun(raw: Path, outdir: Path, binary: Path | None = None, extra: tuple[str, ...] = ()) -> None:
    """A cached run's gem5 command again into ``outdir`` (on ``binary``)."""
    import subprocess

    script = outdir.parent / "script.sh"
    script.write_text((raw / "guest-script.sh").read_text())
    command = [f"--outdir={outdir}" if a.startswith("--outdir=") else a
               for a in (raw / "command.txt").read_text().split()]
    # (command.txt names the staging directory the run was made in.)
    command = [str(script) if a.endswith("/guest-script.sh") else a for a in command]
    if binary is not None:
        command[0] = str(binary)
    subprocess.run([*command, *extra], check=True, cwd=outdir.parent, capture_output=True)


def test_reruns_and_progress_checks_change_no_simulated_result(builds: Builds, tmp_path: Path) -> None:
    raw = _probe_run(builds, tmp_path)
    # The same command again (determinism), and with one check in a simulated
    # second instead of one a millisecond: the simulated statistics must not move.
    for name, extra in (("same", ()), ("fewer-checks", ("--check-ticks", str(10**12)))):
        _rerun(raw, tmp_path / name, extra=extra)
        assert (_simulated_lines(tmp_path / name / "stats.txt")
                == _simulated_lines(raw / "m5out" / "stats.txt")), name


def test_gem5_fast_gives_gem5_opts_simulated_statistics(builds: Builds, tmp_path: Path) -> None:
    """The same restored run on gem5.fast (asserts and debug output compiled
    out, otherwise the same code) must give every simulated statistic alike."""
    from builders import gem5

    fast = gem5.gem5_entry(spec.REPO_ROOT / "gem5-patches",
                           gem5.Gem5BuildOptions(variant="fast"))
    if not fast.exists():
        missing_build("gem5.fast", "'make gem5 GEM5_VARIANT=fast'")
    raw = _probe_run(builds, tmp_path)
    _rerun(raw, tmp_path / "fast", binary=fast.path / "gem5.fast")
    # numMiscRegReads counts calls of the CPU's misc-register read, gem5's
    # own included: on every exception return to EL0 an assert in gem5's
    # illegal-return check calls ELIs64(tc, EL1), two more reads that gem5.fast
    # compiles out (400 for the probe's 200 calls). It is bookkeeping of the
    # simulator, not of the simulated machine; every other line must match.
    def simulated(stats_txt: Path) -> list[str]:
        return [line for line in _simulated_lines(stats_txt)
                if ".numMiscRegReads " not in line]

    assert simulated(tmp_path / "fast" / "stats.txt") == simulated(raw / "m5out" / "stats.txt")


def test_tlbi_timing_and_contiguous_entries_instantiate(builds: Builds, tmp_path: Path) -> None:
    _check_model(builds, tmp_path, "--core", "neoverse-n1",
                 "--param", "tlbi.broadcast_completion=200ns",
                 "--param", "tlbi.per_other_node=150ns",
                 "--param", "tlbi.va_latency=4",
                 "--param", "walker.contiguous_entries=true")


def test_a_write_allocator_is_created_on_the_way_to_its_field(builds: Builds,
                                                            tmp_path: Path) -> None:
    _check_model(builds, tmp_path, "--core", "cortex-x3",
                 "--param", "l1d.write_allocator.no_allocate_limit=12")
    # The created object is a WriteAllocator: a field it lacks is refused by name.
    with pytest.raises(SimulationFailed,
                       match="(?s)status 2.*WriteAllocator has no parameter 'limit'.*coalesce_limit"):
        _check_model(builds, tmp_path, "--core", "cortex-x3",
                     "--param", "l1d.write_allocator.limit=12")


def test_unknown_tlbi_parameter_names_the_valid_ones(builds: Builds, tmp_path: Path) -> None:
    with pytest.raises(SimulationFailed,
                       match="(?s)status 2.*no parameter 'per_node'.*per_other_node"):
        _check_model(builds, tmp_path, "--core", "neoverse-n1", "--param", "tlbi.per_node=1ns")


TLBI_PROBE = REAL_PROBE.replace('name = "probe"', 'name = "tlbi-probe"').replace(
    '[[workloads]]', 'params = [["tlbi.broadcast_completion=500ns", '
    '"walker.contiguous_entries=true"]]\n[[workloads]]')


def test_tlbi_timing_counters_reach_the_results(builds: Builds, tmp_path: Path) -> None:
    rows = rows_by_metric(run_definition(TLBI_PROBE, builds, tmp_path))
    assert {"local_tlbis", "broadcast_tlbis", "dsb_tlbi_waits", "dsb_tlbi_wait_ps"} <= set(rows)
    assert "tlbi.broadcast_completion=500ns" in rows["instructions"]["params"]


EXIT_PROBE = """
name = "probe"
benchmark = "exit_bench"
[matrix]
cores = ["neoverse-n1"]
variants = ["baseline"]
features = ["pan"]
params = [PARAMS]
[[workloads]]
name = "exit"
args = ["exit", "4", "2"]
iterations = 2
"""


def test_tlbi_timing_at_zero_changes_no_simulated_result(builds: Builds, tmp_path: Path) -> None:
    """Patches 0014/0015 switched off: the timing object present with every
    latency zero, and contiguous entries off, simulate exactly what a run
    without them does (only the timing object's own statistics are new)."""
    from builders import cache

    # Exits issue broadcast TLBIs and the DSBs that wait for them.
    plain = EXIT_PROBE.replace("PARAMS", "[]")
    zero = EXIT_PROBE.replace('name = "probe"', 'name = "zero"').replace(
        "PARAMS", '["tlbi.broadcast_completion=0ns", "walker.contiguous_entries=false"]')
    raws = []
    for name, text in (("probe", plain), ("zero", zero)):
        rows = rows_by_metric(run_definition(text, builds, tmp_path, results=name))
        raws.append(cache.Entry(raw_outputs.RUNS, rows["instructions"]["run"],
                                cache.cache_root()).path)
    plain, timed = (_simulated_lines(raw / "m5out" / "stats.txt") for raw in raws)
    assert plain == [line for line in timed if not line.startswith("board.tlbi_timing.")]
    broadcasts = next(line for line in timed
                      if line.startswith("board.tlbi_timing.broadcastTlbis")).split()[1]
    assert int(broadcasts) > 0
