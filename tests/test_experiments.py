"""Experiment definitions expand to runs; bad names fail fast with valid choices."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from experiments import collect, gem5_builds, gem5_commands, spec, stats

GOOD = """
name = "probe"
benchmark = "syscall_loop"
[matrix]
cores = ["cortex-a76"]
variants = ["baseline"]
features = ["", "pan", "pan,pac"]
params = [[], ["cpu.numROBEntries=64"]]
[[workloads]]
name = "invalid"
args = ["invalid", "10", "100"]
iterations = 100
"""


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "probe.toml").write_text(text)
    return tmp_path


def test_every_definition_loads() -> None:
    for name in spec.available():
        assert spec.load(name).runs


def test_matrix_expands_to_every_combination(tmp_path: Path) -> None:
    experiment = spec.load("probe", _write(tmp_path, GOOD))
    assert len(experiment.runs) == 3 * 2
    assert {r.features for r in experiment.runs} == {(), ("pan",), ("pac", "pan")}
    run = experiment.runs[0]
    assert run.guest_script().splitlines()[-1] == "/bench/syscall_loop invalid 10 100"


def test_exclude_leaves_out_matching_runs(tmp_path: Path) -> None:
    text = GOOD + '[[exclude]]\nworkload = "invalid"\nvariant = "baseline"\n'
    assert spec.load("probe", _write(tmp_path, text)).runs == ()
    # An exclusion naming nothing in the experiment is a typo, not a no-op.
    text = GOOD + '[[exclude]]\nvariant = "pac-off"\n'
    with pytest.raises(spec.BadExperiment, match="variant 'pac-off' is not in the experiment"):
        spec.load("probe", _write(tmp_path, text))


def test_exclude_by_kernel_command_line(tmp_path: Path) -> None:
    # A command-line switch only some variants understand: each variant keeps
    # only the command line it is meant to boot with.
    text = GOOD.replace('variants = ["baseline"]', 'variants = ["baseline", "swpan-batched"]')
    text = text.replace("[[workloads]]", 'kernel_args = [[], ["arm64.nopan"]]\n[[workloads]]', 1)
    text += ('[[exclude]]\nvariant = "baseline"\nkernel_args = ["arm64.nopan"]\n'
             '[[exclude]]\nvariant = "swpan-batched"\nkernel_args = []\n')
    runs = spec.load("probe", _write(tmp_path, text)).runs
    assert {(r.variant, r.kernel_args) for r in runs} == {
        ("baseline", ()), ("swpan-batched", ("arm64.nopan",))}


def test_exclude_by_node_count(tmp_path: Path) -> None:
    # A cross-node cost means nothing on one node: its one-node runs are left out.
    text = GOOD.replace("[matrix]", "core_count = 2\n[matrix]\nnodes = [1, 2]", 1)
    text += '[[exclude]]\nnodes = 1\nparams = ["cpu.numROBEntries=64"]\n'
    runs = spec.load("probe", _write(tmp_path, text)).runs
    assert {(r.nodes, r.params) for r in runs} == {
        (1, ()), (2, ()), (2, ("cpu.numROBEntries=64",))}
    with pytest.raises(spec.BadExperiment, match="nodes '3' is not in the experiment"):
        spec.load("probe", _write(tmp_path, text.replace("nodes = 1\n", "nodes = 3\n")))
    with pytest.raises(spec.BadExperiment, match="unknown key 'node'; valid keys: .*nodes"):
        spec.load("probe", _write(tmp_path, text.replace("nodes = 1\n", "node = 1\n")))


def test_exclude_by_feature_set(tmp_path: Path) -> None:
    # Written in another order than the matrix's entry: still the same set.
    text = GOOD + '[[exclude]]\nfeatures = "pac,pan"\n[[exclude]]\nfeatures = ""\n'
    runs = spec.load("probe", _write(tmp_path, text)).runs
    assert {r.features for r in runs} == {("pan",)}
    # The empty set is a choice too, so each choice is quoted.
    with pytest.raises(spec.BadExperiment, match="features 'mte' is not in the experiment "
                       r"\(valid: '', 'pan', 'pac,pan'\)"):
        spec.load("probe", _write(tmp_path, GOOD + '[[exclude]]\nfeatures = "mte"\n'))


def test_exclude_with_unknown_key_fails(tmp_path: Path) -> None:
    with pytest.raises(spec.BadExperiment, match="cpu, core, variant, workload"):
        spec.load("probe", _write(tmp_path, GOOD + '[[exclude]]\nkernel = "x"\n'))


def test_unknown_experiment_lists_valid_ones() -> None:
    with pytest.raises(spec.BadExperiment, match="valid experiments: .*syscall"):
        spec.load("no-such-experiment")


@pytest.mark.parametrize("field, bad, valid", [
    ('cores = ["cortex-a76"]', 'cores = ["cortex-a99"]', "valid cores: .*cortex-a76.*neoverse-v2"),
    ('variants = ["baseline"]', 'variants = ["nope"]', "valid variants: .*baseline"),
    ('features = ["", "pan", "pan,pac"]', 'features = ["smap"]',
     "valid features: pan, pac, fpac, bti, mte, poe"),
])
def test_bad_names_fail_fast(tmp_path: Path, field: str, bad: str, valid: str) -> None:
    with pytest.raises(spec.BadExperiment, match=valid):
        spec.load("probe", _write(tmp_path, GOOD.replace(field, bad)))


STATS = """
---------- Begin Simulation Statistics ----------
simSeconds                                   0.000003                       # Number of seconds simulated (Second)
simTicks                                      3000000                       # Number of ticks simulated (Tick)
hostInstRate                                 99000000                       # Simulator instruction rate (inst/s) ((Count/Second))
hostSeconds                                      0.02                       # Real time elapsed on the host (Second)
board.processor.cores.core.numCycles             8520                       # Number of cpu cycles simulated (Cycle)
board.processor.cores.core.commitStats0.numInsts     4260                   # Number of instructions committed (Count)
board.cache_hierarchy.l1d.overallMisses::total     12                       # number of overall misses (Count)
board.cache_hierarchy.l1i.overallHits::total       900                       # no misses: gem5 leaves them out
board.cache_hierarchy.l2.overallMisses::total        4
board.processor.cores.core.branchPred.condIncorrect  7
board.processor.cores.core.rename.serializing        40
board.processor.cores.core.rename.serializeStallCycles  900
board.processor.cores.core.iew.dispNonSpecInsts        2
board.processor.cores.core.fetch.cacheLines           1500
board.processor.cores.core.mmu.dtb.readMisses        2
board.processor.cores.core.mmu.dtb.writeMisses       1
board.processor.cores.core.mmu.itb.instMisses        1
board.processor.cores.core.mmu.dtb.flushTlb          4
board.processor.cores.core.mmu.dtb.flushedEntries    9
board.memory.mem_ctrl.readReqs                       5
board.processor.cores.core.ipc                      nan                     # IPC
---------- End Simulation Statistics   ----------

---------- Begin Simulation Statistics ----------
simTicks                                     99999999                       # later dump
---------- End Simulation Statistics   ----------
"""


def test_stats_region_is_the_first_dump(tmp_path: Path) -> None:
    path = tmp_path / "stats.txt"
    path.write_text(STATS)
    dumps = stats.read_dumps(path)
    assert len(dumps) == 2
    metrics = {m.name: m.value for m in stats.region_metrics(dumps[0], iterations=10)}
    assert metrics["iterations"] == 10
    assert metrics["ns_per_iteration"] == pytest.approx(300.0)
    assert metrics["cycles_per_iteration"] == pytest.approx(852.0)
    assert metrics["ipc"] == pytest.approx(0.5)
    assert metrics["l1d_misses"] == 12
    assert metrics["l1i_misses"] == 0 and metrics["dtlb_misses"] == 3
    assert metrics["serializing_instructions"] == 40
    assert metrics["serialize_stall_cycles"] == 900 and metrics["fetched_lines"] == 1500
    assert "tag_reads" not in metrics  # only runs with the mte feature have a tag model
    with pytest.raises(stats.MissingStats, match="board.*mte_tags.*tag_checked_misses"):
        stats.region_metrics(dumps[0], iterations=10, features=("mte",))
    assert stats.host_rate(dumps[0]) == pytest.approx(4260 / 0.02)
    assert metrics["dtlb_flushes"] == 4 and "broadcast_tlbis" not in metrics


def test_a_tlbi_timing_in_the_model_makes_the_tlbi_counters_required(tmp_path: Path) -> None:
    """A run whose model.json says it had the TLB-maintenance timing object
    (tlbi.* parameters make one) must have its counters in stats.txt; other
    runs do not report them. Which it had is read, not guessed from params."""
    (tmp_path / "m5out").mkdir()
    (tmp_path / "m5out" / "model.json").write_text(
        '{"tlbi_timing": {"per_other_node": "300ns"}, "privilege_cycles": false}')
    timed = ("pan", *collect.model_objects(tmp_path))
    assert timed == ("pan", stats.TLBI_TIMING)
    assert collect.model_parts(ModelProbe(features=(), params=("tlbi.per_other_node=300ns",))) == ()
    (tmp_path / "m5out" / "model.json").write_text('{"tlbi_timing": null}')
    assert collect.model_objects(tmp_path) == ()
    # Two nodes have links between them, whose counters are then required too.
    assert collect.model_parts(ModelProbe(features=(), params=(), nodes=2)) == (
        stats.NODE_LINKS,)
    path = tmp_path / "stats.txt"
    path.write_text(STATS)
    (dump, _) = stats.read_dumps(path)
    with pytest.raises(stats.MissingStats, match="tlbi_timing.*local_tlbis"):
        stats.region_metrics(dump, iterations=10, features=timed)
    timing = "".join(f"board.tlbi_timing.{name} {value}\n" for name, value in
                     (("localTlbis", 1), ("broadcastTlbis", 16), ("dsbWaits", 1),
                      ("dsbWaitTicks", 250000)))
    path.write_text(STATS.replace("board.memory.mem_ctrl.readReqs", timing +
                                  "board.memory.mem_ctrl.readReqs", 1))
    metrics = {m.name: m.value for m in stats.region_metrics(
        stats.read_dumps(path)[0], iterations=10, features=timed)}
    assert metrics["broadcast_tlbis"] == 16 and metrics["dsb_tlbi_wait_ps"] == 250000


def test_a_model_with_privilege_counters_must_report_them(tmp_path: Path) -> None:
    """Runs whose model.json says the cores had gem5 patch 0020's counters
    report the kernel's cycles; runs made before it have none to report."""
    m5out = tmp_path / "m5out"
    m5out.mkdir()
    assert collect.model_objects(tmp_path) == ()
    (m5out / "model.json").write_text('{"privilege_cycles": false}')
    assert collect.model_objects(tmp_path) == ()
    (m5out / "model.json").write_text('{"privilege_cycles": true}')
    assert collect.model_objects(tmp_path) == (stats.PRIVILEGE,)
    path = tmp_path / "stats.txt"
    path.write_text(STATS)
    (dump, _) = stats.read_dumps(path)
    with pytest.raises(stats.MissingStats, match="privilege.*privileged_cycles"):
        stats.region_metrics(dump, iterations=10, features=(stats.PRIVILEGE,))
    counts = "".join(f"board.processor.cores.core.privilege.{name} {value}\n"
                     for name, value in (("userCycles", 52), ("privilegedCycles", 8468),
                                         ("userInsts", 30), ("privilegedInsts", 4230)))
    path.write_text(STATS.replace("board.memory.mem_ctrl.readReqs", counts +
                                  "board.memory.mem_ctrl.readReqs", 1))
    metrics = {m.name: m.value for m in stats.region_metrics(
        stats.read_dumps(path)[0], iterations=10, features=(stats.PRIVILEGE,))}
    assert metrics["privileged_cycles"] == 8468 and metrics["user_cycles"] == 52
    assert metrics["privileged_instructions"] == 4230


@dataclass(frozen=True)
class ModelProbe:
    features: tuple[str, ...]
    params: tuple[str, ...]
    nodes: int = 1


def test_operations_come_from_the_benchmark() -> None:
    from experiments import collect

    console = "init: up\nsyscall_loop kind=invalid ops=10016\ninit: host script exited\n"
    assert collect.measured_operations(console, "probe") == 10016
    with pytest.raises(collect.BadOutput, match="no ops= line"):
        collect.measured_operations("no count here\n", "probe")


def test_folio_counts_the_benchmark_printed_become_metrics() -> None:
    from experiments import collect

    console = "pgtable_bench mode=fork folio=64k mib=32 folios_64k=512 of 512 ops=4\n"
    assert [(m.name, m.value) for m in collect.guest_reported(console)] == [
        ("folios_64k", 512.0), ("folios_64k_requested", 512.0)]
    console = "pgtable_bench mode=fork folio=pmd mib=1024 folios_pmd=512 of 512 ops=1\n"
    assert [(m.name, m.value) for m in collect.guest_reported(console)] == [
        ("folios_pmd", 512.0), ("folios_pmd_requested", 512.0)]
    assert collect.guest_reported("syscall_loop kind=invalid ops=10016\n") == []


def test_the_module_timed_test_becomes_a_metric() -> None:
    console = "vmalloc_bench test=fix_size_alloc_test pages=1 huge=0 kernel_us=5012 ops=2000\n"
    assert [(m.name, m.value, m.unit) for m in collect.guest_reported(console)] == [
        ("kernel_timed_us", 5012.0, "us")]


MODULE_RUN = """
name = "probe"
benchmark = "vmalloc_bench"
[matrix]
cores = ["neoverse-v1"]
variants = ["kpkeys-base"]
features = ["pan,pac"]
[[workloads]]
name = "fix-1"
args = ["fix_size_alloc_test", "1", "0", "2000"]
iterations = 2000
kernel_module = "test_vmalloc"
"""


def test_a_kernel_module_travels_in_the_script(tmp_path: Path) -> None:
    run = spec.load("probe", _write(tmp_path, MODULE_RUN)).runs[0]
    lines = run.guest_script(b"\x7fELF module").splitlines()
    assert lines[-1] == ("/bench/vmalloc_bench /tmp/test_vmalloc.ko.base64 "
                         "fix_size_alloc_test 1 0 2000")
    assert "cat > /tmp/test_vmalloc.ko.base64 <<'MODULE'" in lines
    assert "f0VMRiBtb2R1bGU=" in lines
    with pytest.raises(ValueError, match="needs the kernel's test_vmalloc.ko"):
        run.guest_script()


def test_a_module_workload_needs_a_kernel_with_modules(tmp_path: Path) -> None:
    text = MODULE_RUN.replace('"kpkeys-base"', '"baseline"')
    with pytest.raises(spec.BadExperiment, match="'baseline' is built without modules"):
        spec.load("probe", _write(tmp_path, text))


def test_unknown_benchmark_lists_valid_ones(tmp_path: Path) -> None:
    bad = GOOD.replace('benchmark = "syscall_loop"', 'benchmark = "nope"')
    with pytest.raises(spec.BadExperiment, match="valid: .*syscall_loop"):
        spec.load("probe", _write(tmp_path, bad))


SELFTESTS = """
name = "probe"
kind = "selftests"
[matrix]
cpus = ["atomic", "o3"]
cores = ["cortex-a76", "neoverse-v2"]
variants = ["baseline"]
features = ["poe"]
[[workloads]]
name = "protection_keys"
args = ["mm/protection_keys"]
"""


def test_selftests_run_once_on_atomic_and_per_core_on_o3(tmp_path: Path) -> None:
    if "mm/protection_keys" not in spec.selftests_available():
        pytest.skip("SKIP: disk-image/selftests/list does not name mm/protection_keys")
    runs = spec.load("probe", _write(tmp_path, SELFTESTS)).runs
    assert sorted((r.cpu, r.core) for r in runs) == [
        ("atomic", "cortex-a76"), ("o3", "cortex-a76"), ("o3", "neoverse-v2")]
    assert runs[0].guest_script().splitlines()[-1] == "run-selftest mm/protection_keys"


def test_unknown_selftest_lists_valid_ones(tmp_path: Path) -> None:
    text = SELFTESTS.replace('"mm/protection_keys"]', '"mm/no_such_test"]')
    with pytest.raises(spec.BadExperiment, match="unknown selftest 'mm/no_such_test'"):
        spec.load("probe", _write(tmp_path, text))


def test_benchmarks_run_on_the_detailed_core_only(tmp_path: Path) -> None:
    text = GOOD.replace("[matrix]", '[matrix]\ncpus = ["atomic"]')
    with pytest.raises(spec.BadExperiment, match="o3"):
        spec.load("probe", _write(tmp_path, text))


def test_each_kernel_command_line_is_its_own_run(tmp_path: Path) -> None:
    text = GOOD.replace('params = [[], ["cpu.numROBEntries=64"]]',
                        'kernel_args = [["kasan.mode=sync"], ["kasan.mode=async"]]')
    runs = spec.load("probe", _write(tmp_path, text)).runs
    assert {r.kernel_args for r in runs} == {("kasan.mode=sync",), ("kasan.mode=async",)}
    assert "{kasan.mode=sync}" in runs[0].label


def test_qemu_reference_boots_the_same_kernel_and_disk_with_mte() -> None:
    from experiments import qemu_reference

    argv = qemu_reference.command(Path("/k/Image"), Path("/d/rootfs.ext4"), ("mte",))
    assert argv[argv.index("-machine") + 1] == "virt,gic-version=3,mte=on"
    assert argv[argv.index("-kernel") + 1] == "/k/Image"
    assert any("file=/d/rootfs.ext4" in a and "snapshot=on" in a for a in argv)
    booted = qemu_reference.command(Path("/k/Image"), Path("/d/rootfs.ext4"), ("mte",),
                                    ("kasan=on", "kasan.mode=async"), "256MiB")
    assert booted[booted.index("-append") + 1].endswith(" kasan=on kasan.mode=async")
    assert booted[booted.index("-m") + 1] == "256M"


def test_only_cpu_keeps_one_cpu_type(tmp_path: Path) -> None:
    if "mm/protection_keys" not in spec.selftests_available():
        pytest.skip("SKIP: disk-image/selftests/list does not name mm/protection_keys")
    experiment = spec.load("probe", _write(tmp_path, SELFTESTS))
    assert {r.cpu for r in spec.only_cpu(experiment, "atomic").runs} == {"atomic"}
    with pytest.raises(spec.BadExperiment, match="valid cpus: atomic, o3"):
        spec.only_cpu(experiment, "timing")


def test_only_runs_keeps_the_named_variants_and_feature_sets(tmp_path: Path) -> None:
    experiment = spec.load("probe", _write(tmp_path, GOOD))
    # Named in any order: the feature set is compared in its canonical order.
    chosen = spec.only_runs(experiment, ["baseline"], ["pan,pac"])
    assert {r.features for r in chosen.runs} == {("pac", "pan")}
    assert len(chosen.runs) == 2 and chosen.partial
    assert {r.features for r in spec.only_runs(experiment, features=["none"]).runs} == {()}
    # Everything chosen: a whole run, its rows replacing the file's.
    assert not spec.only_runs(experiment, ["baseline"]).partial
    with pytest.raises(spec.BadExperiment, match=r"no variant nope \(valid: baseline\)"):
        spec.only_runs(experiment, ["nope"])
    with pytest.raises(spec.BadExperiment, match=r"no feature set mte \(valid: none, pac,pan, "
                       r"pan\)"):
        spec.only_runs(experiment, features=["mte"])
    with pytest.raises(spec.BadExperiment, match="probe: --features: unknown feature"):
        spec.only_runs(experiment, features=["pam"])


def test_only_runs_refuses_a_pair_the_exclusions_leave_empty(tmp_path: Path) -> None:
    text = GOOD.replace('variants = ["baseline"]', 'variants = ["baseline", "pac-off"]') + (
        '[[exclude]]\nvariant = "pac-off"\nfeatures = "pan,pac"\n')
    experiment = spec.load("probe", _write(tmp_path, text))
    with pytest.raises(spec.BadExperiment, match=r"its pairs: .*pac-off \[pan\]"):
        spec.only_runs(experiment, ["pac-off"], ["pan,pac"])


def test_qemu_7_2_is_refused_as_the_mte_reference() -> None:
    from experiments import qemu_reference

    with pytest.raises(qemu_reference.QemuFailed, match="issue 1416"):
        qemu_reference.check_mte_reference("7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)")
    qemu_reference.check_mte_reference("10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)")


def test_atomic_clock_reaches_only_atomic_runs_and_keeps_other_keys() -> None:
    experiment = spec.load("mte-selftests")
    ksm = [r for r in experiment.runs if r.workload.name == "check_ksm_options"]
    assert [r.cpu for r in ksm] == ["atomic"]
    assert ksm[0].workload.atomic_clock == "100MHz"


def test_kunit_rerun_runs_the_suite_before_reading_it() -> None:
    experiment = spec.load("kasan")
    rerun = [r for r in experiment.runs if r.workload.kunit_rerun]
    assert {r.cpu for r in rerun} == {"atomic", "o3"}
    script = rerun[0].guest_script().splitlines()[-1]
    assert script.index("/sys/kernel/debug/kunit/kasan/run") < script.index("run-selftest")
    assert not [r for r in experiment.runs if r.cpu == "o3" and r.workload.name == "kunit-kasan"]


def test_kunit_rerun_needs_a_kunit_workload(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        'kind = "selftests"\n[matrix]\ncores = ["cortex-a76"]\nvariants = ["baseline"]\n'
        '[[workloads]]\nname = "x"\nargs = ["arm64/mte/check_prctl"]\nkunit_rerun = true\n')
    with pytest.raises(spec.BadExperiment, match="kunit_rerun"):
        spec.load("bad", tmp_path)


def _argv(simulation: object) -> list[str]:
    return simulation.key_inputs()["argv"]  # type: ignore[attr-defined, no-any-return]


def test_from_reset_boots_on_its_own_cpu_with_the_boot_arguments(tmp_path: Path) -> None:
    from support import fake_builds

    builds = fake_builds.make(tmp_path, ("kasan-hw",))
    experiment = spec.load("kasan-boot")
    o3 = [r for r in experiment.runs if r.cpu == "o3"]
    assert len(o3) == 3 and all(r.workload.from_reset for r in experiment.runs)
    args = _argv(gem5_commands.run_simulation(builds, o3[0], None))
    assert args[0] == "direct" and "--checkpoint" not in args
    assert args[args.index("--cpu") + 1] == "o3"
    given = [args[i + 1] for i, a in enumerate(args) if a == "--kernel-arg"]
    assert given == list(o3[0].kernel_args)


def test_restored_runs_take_the_checkpoint_not_the_boot_arguments(tmp_path: Path) -> None:
    from support import fake_builds

    builds = fake_builds.make(tmp_path, ("kasan-hw",))
    run = next(r for r in spec.load("kasan").runs if r.cpu == "o3")
    boot = gem5_commands.boot_simulation(builds, run)
    args = _argv(gem5_commands.run_simulation(builds, run, boot.entry()))
    assert args[:3] == ["measure", "--checkpoint", f"checkpoints/{boot.entry().key}/cpt"]
    assert "--kernel-arg" not in args
    assert _argv(boot).count("--kernel-arg") == len(run.kernel_args)


def test_repeated_qemu_boots_are_counted_per_cell() -> None:
    import pandas as pd

    from plots import selftests as table

    assert spec.load("kasan-boot").qemu_boots > 1 and spec.load("mte-selftests").qemu_boots == 1
    rows = [{"boot": b, "metric": m, "value": v}
            for b, verdict, cases in ((1, "pass", ""), (2, "fail", "kmalloc_oob_left"),
                                      (3, "fail", "kmalloc_oob_left;kasan_memcmp"))
            for m, v in (("verdict", verdict), ("failed_cases", cases))]
    assert table.cell(pd.DataFrame(rows)) == (
        "pass in 1 of 3 boots; failed: kmalloc_oob_left ×2, kasan_memcmp ×1")


@pytest.mark.parametrize("change, message", [
    (("[matrix]", "[matrix\n"), r"probe.toml: not valid TOML: .*line"),
    (('params = [[], ["cpu.numROBEntries=64"]]', 'params = ["cpu.numROBEntries=64"]'),
     r"probe.toml: \[matrix\]: 'params' must be a list of lists of strings, got a list of "
     r"string"),
    (('cores = ["cortex-a76"]', 'cores = "cortex-a76"'),
     r"\[matrix\]: 'cores' must be a list of strings, got string"),
    (('benchmark = "syscall_loop"', 'benchmark = "syscall_loop"\nrepeats = 3'),
     r"probe.toml: unknown key 'repeats'; valid keys: name, description"),
    (("iterations = 100", "iterations = 100\niteration = 5"),
     r"\[\[workloads\]\] #1: unknown key 'iteration'"),
    (("iterations = 100", 'iterations = "100"'),
     r"\[\[workloads\]\] #1: 'iterations' must be a integer, got string"),
    (("iterations = 100", ""), r"needs 'iterations'"),
    (('variants = ["baseline"]', ""), r"\[matrix\]: missing key 'variants'"),
    (('params = [[], ["cpu.numROBEntries=64"]]', 'params = [["cpu.numROBEntries"]]'),
     r"'cpu.numROBEntries' is not ROOT.NAME=VALUE"),
    (('params = [[], ["cpu.numROBEntries=64"]]', 'params = [["l4.size=1MiB"]]'),
     r"unknown root 'l4'; valid roots: cpu, l1i, l1d, l2, l3, walker, mte_tags, tlbi, node_link, sysreg"),
    (('params = [[], ["cpu.numROBEntries=64"]]', 'params = [["sysreg.sctlr.write_latncy=4"]]'),
     r"no field 'write_latncy'"),
    (('params = [[], ["cpu.numROBEntries=64"]]', 'params = [["sysreg.sctlr.write_latency=x"]]'),
     r"expected a whole number of cycles"),
    (('features = ["", "pan", "pan,pac"]', 'features = ["pan", "pan"]'),
     r"names one run twice"),
    (('benchmark = "syscall_loop"', 'benchmark = "syscall_loop"\nmax_ms = 0'),
     r"'max_ms' must be a positive number"),
    (('benchmark = "syscall_loop"', 'benchmark = "syscall_loop"\nmax_ms = nan'),
     r"'max_ms' must be a positive number"),
    (('benchmark = "syscall_loop"', 'benchmark = "syscall_loop"\ncore_count = 9'),
     r"core_count 9, nodes 1: cores must be 1 to 8, got 9"),
    (("[matrix]", "core_count = 3\n[matrix]\nnodes = [1, 2]"),
     r"core_count 3, nodes 2: 3 cores do not split evenly over 2 nodes"),
    (('variants = ["baseline"]', 'variants = ["baseline"]\nnodes = [1, 3]'),
     r"core_count 1, nodes 3: NUMA nodes must be one of 1, 2, got 3"),
    (('variants = ["baseline"]', 'variants = ["baseline"]\nnodes = ["2"]'),
     r"'nodes' must be a list of integers, got a list of string"),
])
def test_bad_definitions_fail_in_one_line(tmp_path: Path, change: tuple[str, str],
                                          message: str) -> None:
    old, new = change
    assert old in GOOD
    with pytest.raises(spec.BadExperiment, match=message) as failure:
        spec.load("probe", _write(tmp_path, GOOD.replace(old, new)))
    assert "\n" not in str(failure.value).strip()


def test_a_bad_experiment_stops_before_any_build(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from experiments import __main__ as cli

    monkeypatch.setenv("ARTIFACT_CACHE", str(tmp_path / "cache"))
    assert cli.main(["run", "no-such-experiment"]) == 1
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("command, gem5_variant", [
    (["run", "syscall"], "opt"), (["run", "syscall", "--core", "neoverse-n1"], "opt"),
    (["run", "syscall", "--gem5-variant", "fast"], "fast"),
    (["sweep", "syscall", "--param", "l2.data_latency", "--values", "9", "12"], "opt")])
def test_run_and_sweep_reach_the_builds_with_every_option_set(
        command: list[str], gem5_variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from experiments import __main__ as cli

    asked: dict[str, object] = {}

    def builds(variants: list[str], jobs: int, simulator: bool = True,
               rootfs: str = "debian", gem5_variant: str = "opt") -> None:
        asked.update(variants=variants, rootfs=rootfs, gem5_variant=gem5_variant)
        raise RuntimeError("no builds in this test")

    monkeypatch.setattr(gem5_builds, "ensure_builds", builds)
    assert cli.main(command) == 1
    assert asked == {"variants": ["baseline"], "rootfs": "debian", "gem5_variant": gem5_variant}


def test_the_binary_is_the_one_the_gem5_entry_was_built_as(tmp_path: Path) -> None:
    import dataclasses
    import json

    from builders import cache
    from support import fake_builds

    builds = fake_builds.make(tmp_path)
    assert builds.gem5_binary.name == "gem5.opt"
    fast = cache.Entry(kind="gem5", key="fa4e9e50000000ff", root=tmp_path)
    fast.path.mkdir(parents=True)
    (fast.path / cache.MANIFEST).write_text(json.dumps(
        {"kind": "gem5", "key": fast.key, "inputs": {"options": {"variant": "fast"}}}))
    assert dataclasses.replace(builds, gem5=fast).gem5_binary == fast.path / "gem5.fast"


def test_derived_runs_take_the_core_and_the_extra_overrides(tmp_path: Path) -> None:
    experiment = spec.load("probe", _write(tmp_path, GOOD))
    derived = spec.derive(experiment, ["neoverse-n1", "cortex-a75"], ["cpu.numROBEntries=96"])
    assert {r.core for r in derived.runs} == {"neoverse-n1", "cortex-a75"}
    # The override of a key the run already sets replaces it: no duplicates.
    assert {r.params for r in derived.runs} == {("cpu.numROBEntries=96",)}
    assert len(derived.runs) == 2 * 3
    with pytest.raises(spec.BadExperiment, match="--core: unknown core 'a99'"):
        spec.derive(experiment, ["a99"])
    with pytest.raises(spec.BadExperiment, match="--param: 'l2size' is not ROOT.NAME=VALUE"):
        spec.derive(experiment, params=["l2size"])
    assert spec.derived_label(["neoverse-n1"], ["l2.size=1MiB"]) == "neoverse-n1-l2.size=1MiB"


def test_a_sweep_keeps_the_unmodified_model_beside_each_value(tmp_path: Path) -> None:
    experiment = spec.load("probe", _write(tmp_path, GOOD.replace(
        'params = [[], ["cpu.numROBEntries=64"]]', "")))
    swept = spec.sweep(experiment, "l2.data_latency", ["9", "12"])
    assert sorted({r.params for r in swept.runs}) == [
        (), ("l2.data_latency=12",), ("l2.data_latency=9",)]
    assert len(swept.runs) == 3 * 3


def test_the_sweep_figure_reads_the_swept_values(tmp_path: Path) -> None:
    from experiments import collect
    from plots import sweep

    rows = [{"experiment": "probe", "core": "cortex-a76", "variant": "baseline",
             "features": "pan", "workload": "invalid", "params": params,
             "metric": "ns_per_iteration", "value": value, "unit": "ns",
             "gem5_version": "v", "gem5_build": "g", "kernel_build": "k"}
            for params, value in (("", 100.0), ("l2.data_latency=9", 101.0),
                                  ("l2.data_latency=12", 103.0))]
    collect.write_csv(rows, tmp_path / "probe.csv")
    assert sweep.value_of("cpu.x=1 l2.data_latency=9", "l2.data_latency") == "9"
    assert sweep.main([str(tmp_path / "probe.csv"), "--param", "l2.data_latency"]) == 0
    assert (tmp_path / "probe-l2.data_latency.png").is_file()


def test_layout_samples_pin_memory_before_the_benchmark(tmp_path: Path) -> None:
    experiment = spec.load("probe", _write(tmp_path, "samples = 3\n" + GOOD))
    assert len(experiment.runs) == 3 * 2 * 3
    by_sample = {r.sample: r for r in experiment.runs
                 if r.features == ("pan",) and not r.params}
    assert sorted(by_sample) == [0, 1, 2]
    # Sample 0 is the run as defined (same script, so the same raw output).
    assert "layout" not in by_sample[0].guest_script()
    second = by_sample[2].guest_script().splitlines()
    assert second[2].startswith("dd if=/dev/zero of=/dev/shm/layout-pad bs=1118208 count=2 ")
    assert second[-1] == "/bench/syscall_loop invalid 10 100"
    assert by_sample[2].label.endswith("#2")
    assert len(spec.with_samples(spec.load("probe", _write(tmp_path, GOOD)), 5).runs) == 30
    with pytest.raises(spec.BadExperiment, match="samples"):
        spec.load("probe", _write(tmp_path, "samples = 0\n" + GOOD))


def test_an_empty_cache_lists_exactly_the_builds_the_runs_need(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from builders import kernel

    if not kernel.DEBIAN_TARBALL.is_file():
        pytest.skip(f"SKIP: {kernel.DEBIAN_TARBALL} is missing, so no kernel can be keyed "
                    "(run 'make deps')")
    monkeypatch.setenv("ARTIFACT_CACHE", str(tmp_path))
    missing = gem5_builds.builds_to_make(["baseline", "swpan-batched"])
    assert missing[0].startswith("gem5")
    assert missing[-1].startswith("2 kernel variant(s)")
    assert missing[-1].endswith(": baseline, swpan-batched")
    # QEMU reference runs need the guest only.
    assert not any(m.startswith("gem5")
                   for m in gem5_builds.builds_to_make(["baseline"], simulator=False))
    assert not list(tmp_path.iterdir()) or all(p.name != "kernel" for p in tmp_path.iterdir())


def test_node_counts_multiply_the_runs_and_reach_gem5_only_when_two(tmp_path: Path) -> None:
    """One-node runs keep the argument list (hence the keys) they always had."""
    from support import fake_builds

    text = GOOD.replace("[matrix]", "core_count = 4\n[matrix]\nnodes = [1, 2]")
    experiment = spec.load("probe", _write(tmp_path, text))
    assert len(experiment.runs) == 2 * len(spec.load("probe", _write(tmp_path, GOOD)).runs)
    assert {(r.cores, r.nodes) for r in experiment.runs} == {(4, 1), (4, 2)}
    builds = fake_builds.make(tmp_path, ("baseline",))
    for run in (next(r for r in experiment.runs if r.nodes == n) for n in (1, 2)):
        boot = gem5_commands.boot_simulation(builds, run)
        for argv in (_argv(boot), _argv(gem5_commands.run_simulation(builds, run, boot.entry()))):
            assert argv[argv.index("--cores") + 1] == "4"
            assert ("--numa-nodes" in argv) == (run.nodes == 2)
        assert "(4 cores, 2 nodes)" in run.label or run.nodes == 1


def test_the_kernel_variant_table_names_every_variant_and_its_experiments(
        repo_root: Path) -> None:
    import re
    from collections import defaultdict

    used: dict[str, set[str]] = defaultdict(set)
    names = spec.available()
    for name in names:
        for run in spec.load(name).runs:
            used[run.variant].add(name)
    table: dict[str, set[str]] = {}
    for line in (repo_root / "kernel-patches" / "README.md").read_text().splitlines():
        if row := re.match(r"\| `([a-z0-9-]+)` \| .* \| ([^|]*) \|$", line):
            table[row[1]] = set(re.findall(r"`([a-z0-9-]+)`", row[2])) & set(names)
    folders = {p.name for p in (repo_root / "kernel-patches").iterdir()
               if (p / "series").is_file()}
    assert set(table) == folders
    assert {v: e for v, e in table.items() if e} == dict(used)


@pytest.mark.parametrize("command, where", [
    (["run", "syscall"], "out/results"),
    (["run", "syscall", "--gem5-variant", "fast"], "out/derived/gem5-fast"),
    (["run", "syscall", "--core", "neoverse-n1", "--gem5-variant", "fast"],
     "out/derived/neoverse-n1-gem5-fast"),
    (["run", "syscall", "--param", "l2.data_latency=14"], "out/derived/l2.data_latency=14"),
    (["run", "syscall", "--gem5-variant", "fast", "--results-dir", "elsewhere"], "elsewhere")])
def test_another_gem5_binary_never_writes_over_the_committed_results(
        command: list[str], where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from experiments import __main__ as cli
    from experiments import runner, simulate

    written: list[Path] = []
    monkeypatch.setattr(gem5_builds, "ensure_builds", lambda *args, **kwargs: None)
    monkeypatch.setattr(simulate.RepoState, "read", classmethod(
        lambda cls: simulate.RepoState("test", False)))
    monkeypatch.setattr(runner, "run_experiments",
                        lambda experiments, builds, gem5, jobs, results_dir, cpu:
                        written.append(results_dir))
    assert cli.main(command) == 0
    expected = Path(where) if where == "elsewhere" else spec.REPO_ROOT / where
    assert written == [expected]


def test_detail_is_checked_and_reaches_gem5_only_when_not_full(tmp_path: Path) -> None:
    from support import fake_builds

    builds = fake_builds.make(tmp_path)
    full = spec.load("probe", _write(tmp_path, GOOD)).runs[0]
    fast = spec.load("probe", _write(tmp_path, 'detail = "fast-forward"\n' + GOOD)).runs[0]
    assert (full.detail, fast.detail) == ("full", "fast-forward")
    assert "(fast-forward)" in fast.label and "fast-forward" not in full.label
    full_argv = _argv(gem5_commands.run_simulation(builds, full, None))
    fast_argv = _argv(gem5_commands.run_simulation(builds, fast, None))
    # Full-detail runs keep the keys they had before the choice existed.
    assert "--detail" not in full_argv
    assert fast_argv[fast_argv.index("--detail") + 1] == "fast-forward"
    with pytest.raises(spec.BadExperiment, match="unknown detail 'fast'; valid: full, "
                       "fast-forward"):
        spec.load("probe", _write(tmp_path, 'detail = "fast"\n' + GOOD))


def test_fast_forward_is_refused_where_no_benchmark_can_ask_for_it() -> None:
    for name in ("c3-arm32-pan", "kasan", "kasan-boot"):
        with pytest.raises(spec.BadExperiment, match="use detail full"):
            spec.with_detail(spec.load(name), "fast-forward")
    # A selftest program runs on the core model, the shell around it does not.
    o3 = [r for r in spec.with_detail(spec.load("mte-selftests"), "fast-forward").runs
          if r.cpu == "o3"]
    assert o3 and "SELFTEST_DETAIL=1 run-selftest" in o3[0].guest_script()
    # Atomic runs are left as they are: there is nothing to switch to.
    assert spec.with_detail(spec.load("syscall"), "fast-forward").runs[0].detail == (
        "fast-forward")


def test_region_counters_add_the_fast_forward_processors_cores() -> None:
    dump = {"simTicks": 1000.0,
            "board.processor.cores.core.numCycles": 0.0,
            "board.processor.cores.core.commitStats0.numInsts": 0.0,
            "board.processor.detailed_cores.core.numCycles": 500.0,
            "board.processor.detailed_cores.core.commitStats0.numInsts": 800.0}
    assert stats.Counter("cycles", "cycles", stats.CORES, "numCycles").value(dump) == 500.0
    assert stats.Counter("instructions", "instructions", stats.CORES,
                         r"commitStats0\.numInsts").value(dump) == 800.0


def test_a_name_that_differs_from_the_file_name_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, GOOD.replace('name = "probe"', 'name = "other"'))
    with pytest.raises(spec.BadExperiment, match="name 'other' differs from the file's name"):
        spec.load("probe", tmp_path)


def test_list_names_a_broken_definition_and_lists_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from experiments.__main__ import main

    _write(tmp_path, GOOD)
    (tmp_path / "broken.toml").write_text("name = \n")
    assert main(["--definitions", str(tmp_path), "list"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("broken") and "BROKEN" in lines[0] and "not valid TOML" in lines[0]
    assert lines[1].startswith("probe") and "6 runs" in lines[1]
    (tmp_path / "broken.toml").unlink()
    assert main(["--definitions", str(tmp_path), "list"]) == 0
    with pytest.raises(SystemExit):
        main(["--definitions", str(tmp_path / "nowhere"), "list"])
    assert "no such folder" in capsys.readouterr().err


def test_a_dry_run_times_runs_from_their_records_and_builds_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from experiments import dry_run
    from experiments.__main__ import main

    experiment = spec.load("probe", _write(tmp_path, GOOD))
    first, second = experiment.runs[0], experiment.runs[1]
    row = {**collect.run_coordinates(first), "sample": first.sample, "metric": "ns",
           "value": 1, "host_seconds": 120}
    collect.write_csv([row], tmp_path / "records" / "probe.csv")
    seconds = dry_run.recorded_seconds(["probe"], [tmp_path / "records"])
    assert seconds == {dry_run.place_of(first): 120.0}
    # Recorded; its workload's median; in fast-forward, never recorded in that
    # mode, at its full-detail time.
    assert dry_run.estimate([first, second], seconds) == dry_run.Estimate(240.0, 1, 1, 0, 0)
    fast = spec.with_detail(experiment, "fast-forward").runs[0]
    assert dry_run.estimate([fast], seconds) == dry_run.Estimate(120.0, 0, 0, 1, 0)
    # A new experiment of the same benchmark: at other experiments' runs of
    # that workload name and mode; nothing alike: counted as unknown.
    other = {("other", *place[1:]): 90.0 for place in seconds}
    assert dry_run.estimate([first], {}, other) == dry_run.Estimate(90.0, 0, 0, 0, 0, 1)
    assert dry_run.estimate([first], {}, {}) == dry_run.Estimate(0.0, 0, 0, 0, 1, 0)

    def no_builds(*_: object, **__: object) -> None:
        raise AssertionError("a dry run built something")

    monkeypatch.setattr(gem5_builds, "ensure_builds", no_builds)
    assert main(["--definitions", str(tmp_path), "run", "probe", "--dry-run", "-j", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dry run: nothing is built or simulated\nbuilds needed: ")
    assert "probe (full): 6 runs" in out and "total: about" in out


def test_the_sysreg_microbenchmark_times_every_operation_the_module_has() -> None:
    """sysreg-microbench runs one workload per operation of test_sysreg_cost
    (its table in the sysreg-bench kernel patch), no more and no fewer, and
    counts each run's operations as the module does (eight per iteration)."""
    import re

    pool = Path(__file__).resolve().parent.parent / "kernel-patches" / "patches"
    patch = next((pool / "sysreg-bench").glob("*.patch"))
    text = patch.read_text()
    table = text[text.index("timed_op ops[] = {"):]
    table = table[:table.index("};")]
    module_ops = re.findall(r"OP(?:_NEEDS)?\((\w+)", table)
    experiment = spec.load("sysreg-microbench")
    workloads = {run.workload for run in experiment.runs}
    assert sorted(w.name for w in workloads) == sorted(module_ops)
    for workload in workloads:
        iters = dict(a.split("=", 1) for a in workload.args)["iters"]
        assert workload.args[0] == f"op={workload.name}"
        assert workload.iterations == 8 * int(iters)
        assert workload.kernel_module == "test_sysreg_cost"


def test_a_quick_table_chooses_headline_runs_of_the_first_layout_sample(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from experiments.__main__ import main

    text = GOOD.replace("[matrix]", "samples = 3\n[matrix]")
    assert spec.load("probe", _write(tmp_path, text)).quick == ()
    assert spec.quick_set(tmp_path) == []
    every = spec.load("probe", _write(tmp_path, text.replace("[matrix]", "quick = true\n[matrix]")))
    assert every.quick == every.runs and len(every.runs) == 18
    # A list is any of its names; params is one run's whole list.
    chosen = text.replace("[matrix]", '[quick]\nfeatures = ["pan", ""]\nparams = []\n[matrix]')
    experiment = spec.load("probe", _write(tmp_path, chosen))
    assert {(r.features, r.params, r.sample) for r in experiment.quick} == {
        (("pan",), (), 0), ((), (), 0)}
    assert spec.quick_part(experiment).runs == experiment.quick
    assert spec.quick_part(experiment).partial and not spec.quick_part(every).partial
    assert spec.quick_set(tmp_path) == ["probe"]
    assert main(["--definitions", str(tmp_path), "list"]) == 0
    assert "18 runs   2 quick" in capsys.readouterr().out
    # make's default (no names): the quick runs only.
    assert main(["--definitions", str(tmp_path), "run", "--dry-run", "-j", "2"]) == 0
    assert "probe (full): 2 runs" in capsys.readouterr().out


@pytest.mark.parametrize("quick, message", [
    ('[quick]\nvariant = "pac-off"\n', r"\[quick\]: variant 'pac-off' is not in the experiment "
     r"\(valid: 'baseline'\)"),
    ('[quick]\nfeatures = ["pan", "mte,pac"]\n', r"\[quick\]: features 'mte,pac' is not in"),
    ("[quick]\n", r"\[quick\]: empty; give one or more of"),
    ('[quick]\nsample = 1\n', r"\[quick\]: unknown key 'sample'"),
    ('quick = "yes"\n', r"'quick' must be a boolean or table, got string"),
    ('[quick]\nvariant = []\n', r"\[quick\]: 'variant' is an empty list"),
    ('[[exclude]]\nfeatures = "pan"\n[quick]\nfeatures = "pan"\n',
     r"\[quick\] \(features = 'pan'\) chooses no run left after \[\[exclude\]\]"),
])
def test_a_bad_quick_table_fails_in_one_line(tmp_path: Path, quick: str, message: str) -> None:
    with pytest.raises(spec.BadExperiment, match=message) as failure:
        spec.load("probe", _write(tmp_path, GOOD.replace("[matrix]", quick + "[matrix]")))
    assert "\n" not in str(failure.value).strip()


def test_held_sync_checked_stores_are_counted_and_zero_when_none_was(tmp_path: Path) -> None:
    """gem5 0029 prints its counters of held SYNC-checked stores only when a
    store was held: an MTE run without one (checks off, async, or a build
    before 0029) reads 0, and a run with them sums every core's."""
    tags = "".join(f"board.cache_hierarchy.mte_tags.{name} 0\n" for name in
                   ("checkedMisses", "checkedPrefetches", "tagCacheMisses", "tagReads"))
    path = tmp_path / "stats.txt"
    path.write_text(STATS.replace("board.memory.mem_ctrl.readReqs", tags +
                                  "board.memory.mem_ctrl.readReqs", 1))
    metrics = {m.name: m.value for m in stats.region_metrics(
        stats.read_dumps(path)[0], iterations=10, features=("mte",))}
    assert metrics["sync_checked_stores"] == 0 and metrics["sync_check_stall_cycles"] == 0
    held = ("board.processor.cores.core.lsq0.syncCheckedStores 640\n"
            "board.processor.cores.core.commit.syncCheckStalls 2100\n")
    path.write_text(STATS.replace("board.memory.mem_ctrl.readReqs", tags + held +
                                  "board.memory.mem_ctrl.readReqs", 1))
    metrics = {m.name: m.value for m in stats.region_metrics(
        stats.read_dumps(path)[0], iterations=10, features=("mte",))}
    assert metrics["sync_checked_stores"] == 640 and metrics["sync_check_stall_cycles"] == 2100
