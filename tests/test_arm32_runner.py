"""32-bit runs on the experiment runner: which definitions are refused
before any build, what the boot and the run pass gem5 (and so their keys),
that the arm64 runs' arguments are as before, and how a run's statistics
dumps become rows. No gem5 needed, except the last test (skipped without the
builds)."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest
from support import fake_builds

from builders import cache
from experiments import collect, gem5_builds, gem5_commands, raw_outputs, runner, simulate, spec
from experiments.schema import BadExperiment

ARM32 = """
name = "probe32"
benchmark = "c3-getppid"
memory = "512MiB"
max_ms = 200
[matrix]
cores = ["cortex-a15"]
variants = ["arm32-pan-off", "arm32-sw-pan"]
features = [""]
core_counts = [1, 2]
[[workloads]]
name = "getppid"
args = ["1000", "2000", "5"]
iterations = 2000
"""

ARM64 = """
name = "probe"
benchmark = "syscall_loop"
[matrix]
cores = ["cortex-a76"]
variants = ["baseline"]
features = ["pan"]
[[workloads]]
name = "invalid"
args = ["invalid", "10", "1000"]
iterations = 1000
"""


def _load(tmp_path: Path, text: str) -> spec.Experiment:
    """The definition ``text``, in the file its name gives."""
    import tomllib

    name = tomllib.loads(text).get("name", "probe32")
    definitions = tmp_path / "definitions"
    definitions.mkdir(parents=True, exist_ok=True)
    (definitions / f"{name}.toml").write_text(text)
    return spec.load(name, definitions)


def _builds(root: Path) -> gem5_builds.Builds:
    """Fake builds with the 32-bit guest side (boot.arm, the initramfs)."""
    builds = fake_builds.make(root, ("baseline", "arm32-pan-off", "arm32-sw-pan"))
    arm32_tools = fake_builds._entry(root, "gem5-tools-arm32", "fa4e9e5000000004", {},
                                     {"boot.arm": "bootloader"})
    initramfs = fake_builds._entry(root, "initramfs", "fa4e9e5000000005", {},
                                   {"initramfs.cpio": "archive"})
    return gem5_builds.Builds(gem5=builds.gem5, tools=builds.tools, disk=builds.disk,
                           kernels=builds.kernels, configs=builds.configs,
                           arm32_tools=arm32_tools, initramfs=initramfs)


def test_the_definition_expands_to_variants_times_core_counts(tmp_path: Path) -> None:
    experiment = _load(tmp_path, ARM32)
    assert sorted((r.variant, r.cores) for r in experiment.runs) == [
        ("arm32-pan-off", 1), ("arm32-pan-off", 2), ("arm32-sw-pan", 1), ("arm32-sw-pan", 2)]
    assert all(r.arm32 and r.init_args == "1000 2000 5" for r in experiment.runs)
    assert spec.load("c3-arm32-pan").runs  # the repository's definition loads


@pytest.mark.parametrize(("change", "message"), [
    (('cores = ["cortex-a15"]', 'cores = ["cortex-a76"]'), "arm64 core and kernel variant"),
    (('variants = ["arm32-pan-off", "arm32-sw-pan"]', 'variants = ["baseline"]'),
     "32-bit core and kernel variant 'baseline' is arm64"),
    (('features = [""]', 'features = ["pan"]'), "arm64 features"),
    (('core_counts = [1, 2]', 'core_counts = [2]\nnodes = [2]'), "one NUMA node"),
    (('core_counts = [1, 2]', 'core_counts = [1]\nparams = [["l3.size=4MiB"]]'),
     "takes the roots"),
    (('args = ["1000", "2000", "5"]', 'args = ["1000", "2000"]'), "WARMUP, CALLS, RUNS"),
    (('iterations = 2000', 'iterations = 1000'), "equal 'iterations'"),
    (('args = ["1000", "2000", "5"]', 'args = ["1000", "2000", "65"]'), "RUNS 1 to 64"),
    (('max_ms = 200', 'max_ms = 200\nsamples = 2'), "layout samples"),
    (('max_ms = 200', 'max_ms = 200\ncore_count = 2'), "not both"),
    (('cores = ["cortex-a15"]', 'cores = ["cortex-a16"]'), "or a 32-bit one: cortex-a15"),
])
def test_impossible_32_bit_runs_fail_in_one_line(tmp_path: Path, change: tuple[str, str],
                                                 message: str) -> None:
    with pytest.raises(BadExperiment, match=message) as err:
        _load(tmp_path, ARM32.replace(*change))
    assert "\n" not in str(err.value)


def test_the_32_bit_loop_needs_a_32_bit_core(tmp_path: Path) -> None:
    with pytest.raises(BadExperiment, match="runs on a 32-bit core"):
        _load(tmp_path, ARM64.replace('benchmark = "syscall_loop"', 'benchmark = "c3-getppid"'))


def test_derived_runs_are_checked_and_samples_refused(tmp_path: Path) -> None:
    experiment = _load(tmp_path, ARM32)
    with pytest.raises(BadExperiment, match="arm64 core"):
        spec.derive(experiment, ["cortex-a76"])
    with pytest.raises(BadExperiment, match="takes the roots"):
        spec.derive(experiment, params=["l3.size=4MiB"])
    assert spec.derive(experiment, params=["cpu.numROBEntries=64"]).runs
    assert spec.derive(experiment, params=["sysreg.dacr.write_latency=10"]).runs
    with pytest.raises(BadExperiment, match="layout samples"):
        spec.with_samples(experiment, 2)


def test_a_32_bit_boot_and_run_pass_gem5_what_they_use(tmp_path: Path) -> None:
    builds = _builds(tmp_path / "elsewhere")
    run = next(r for r in _load(tmp_path, ARM32).runs if r.cores == 2)
    planned = runner.plan(builds, run)
    assert planned.boot is not None
    kernel = builds.kernels[run.variant].key
    guest = ["--vmlinux", f"kernel/{kernel}/vmlinux",
             "--bootloader", "gem5-tools-arm32/fa4e9e5000000004/boot.arm",
             "--initramfs", "initramfs/fa4e9e5000000005/initramfs.cpio"]
    assert planned.boot.key_inputs()["argv"] == [
        "arm32", *guest, "--memory", "512MiB", "--cores", "2",
        "--max-ticks", str(gem5_commands.BOOT_MAX_TICKS), "--checkpoint-out", "output:cpt"]
    assert planned.run.key_inputs()["argv"] == [
        "arm32-measure", "--checkpoint", f"checkpoints/{planned.boot.entry().key}/cpt", *guest,
        "--cpu", "o3", "--core", "cortex-a15", "--memory", "512MiB", "--cores", "2",
        "--max-ticks", "200000000000", "--init-args", "1000 2000 5"]
    # The counts reach the guest at the restore: one boot for every workload.
    counts = ARM32.replace('"2000", "5"', '"4000", "5"').replace("iterations = 2000",
                                                                "iterations = 4000")
    other = runner.plan(builds, next(r for r in _load(tmp_path, counts).runs
                                     if r.cores == 2))
    assert other.boot is not None and other.boot.entry().key == planned.boot.entry().key
    assert other.run.entry().key != planned.run.entry().key
    # Provenance names the 32-bit guest side.
    assert builds.guest_provenance(run.variant)["disk_build"] == "fa4e9e5000000005"


def test_arm64_runs_pass_gem5_the_same_arguments_as_before(tmp_path: Path) -> None:
    """The 32-bit path adds nothing to an arm64 run's arguments, so every
    cached arm64 run keeps its key."""
    builds = _builds(tmp_path / "elsewhere")
    planned = runner.plan(builds, _load(tmp_path, ARM64).runs[0])
    files = ["--vmlinux", f"kernel/{builds.kernels['baseline'].key}/vmlinux",
             "--disk", "disk/fa4e9e5000000003/rootfs.ext4",
             "--bootloader", "gem5-tools/fa4e9e5000000002/boot_foundation.arm64"]
    assert planned.boot is not None
    assert planned.boot.key_inputs()["argv"] == [
        "boot", *files, "--architecture", "armv8.2", "--features", "pan", "--memory", "1GiB",
        "--cores", "1", "--max-ticks", str(gem5_commands.BOOT_MAX_TICKS),
        "--checkpoint-out", "output:cpt"]
    argv = planned.run.key_inputs()["argv"]
    assert isinstance(argv, list)
    assert argv[:3] == ["measure", "--checkpoint", f"checkpoints/{planned.boot.entry().key}/cpt"]
    assert argv[3:] == [*files, "--cpu", "o3", "--core", "cortex-a76", "--architecture",
                        "armv8.2", "--features", "pan", "--memory", "1GiB", "--cores", "1",
                        "--max-ticks", "1000000000000", "--script", argv[-1]]
    assert argv[-1].startswith("guest-script:")
    assert builds.guest_provenance("baseline")["disk_build"] == "fa4e9e5000000003"


def _dump(ticks: int, cycles: int, insts: int) -> str:
    return "\n".join([
        "---------- Begin Simulation Statistics ----------",
        f"simTicks {ticks}", "hostSeconds 0.5",
        f"board.processor.cores.core.numCycles {cycles}",
        f"board.processor.cores.core.commitStats0.numInsts {insts}",
        "board.processor.cores.core.branchPred.condIncorrect 6",
        "board.processor.cores.core.rename.serializing 28",
        "board.processor.cores.core.rename.serializeStallCycles 350",
        "board.processor.cores.core.iew.dispNonSpecInsts 3",
        "board.processor.cores.core.fetch.cacheLines 234",
        "board.cache_hierarchy.l1d.tags.tagAccesses 208",
        "board.cache_hierarchy.l1i.tags.tagAccesses 468",
        "board.cache_hierarchy.l2.tags.tagAccesses 17",
        "board.processor.cores.core.mmu.dtb.readMisses 0",
        "board.processor.cores.core.mmu.itb.instMisses 0",
        "board.processor.cores.core.mmu.dtb.flushTlb 0",
        "board.processor.cores.core.mmu.dtb.flushedEntries 0",
        "board.memory.mem_ctrl.readReqs 0",
        "---------- End Simulation Statistics   ----------", ""])


def _raw(tmp_path: Path, runs: int, dumps: int) -> Path:
    m5out = tmp_path / "raw" / "m5out"
    m5out.mkdir(parents=True)
    lines = ["c3-getppid host counts warmup=10 calls=100 runs=%d" % runs,
             *(f"c3-getppid run={i} calls=100 ns={20000 + i} us_per_call=0.200"
               for i in range(1, runs + 1)), f"c3-getppid done runs={runs}"]
    (m5out / raw_outputs.CONSOLE).write_text("\r\n".join(lines) + "\r\n")
    (m5out / "stats.txt").write_text("".join(_dump(19_800_000 + i, 33_700, 13_200)
                                             for i in range(dumps)))
    return tmp_path / "raw"


def _run32(tmp_path: Path, runs: int) -> spec.RunSpec:
    text = ARM32.replace('"1000", "2000", "5"', f'"10", "100", "{runs}"').replace(
        "iterations = 2000", "iterations = 100")
    return _load(tmp_path, text).runs[0]


def test_each_guest_run_is_one_sample(tmp_path: Path) -> None:
    # Two runs' dumps, then gem5's own at exit (left out).
    measured = collect.arm32_metrics(_run32(tmp_path, 2), _raw(tmp_path, runs=2, dumps=3))
    assert len(measured) == 2
    values = [{m.name: m.value for m in metrics} for metrics, _ in measured]
    assert values[0]["cycles_per_iteration"] == 337
    assert values[0]["instructions_per_iteration"] == 132
    assert values[0]["ns_per_iteration"] == pytest.approx(198.0)
    assert values[1]["guest_ns_per_iteration"] == pytest.approx(200.02)
    assert values[0]["serializing_instructions"] == 28


def test_missing_runs_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(collect.BadOutput, match="1 statistics dumps for 2 runs"):
        collect.arm32_metrics(_run32(tmp_path, 2), _raw(tmp_path, runs=2, dumps=1))
    with pytest.raises(collect.BadOutput, match="reported 2 runs"):
        collect.arm32_metrics(_run32(tmp_path / "b", 3), _raw(tmp_path / "b", runs=2, dumps=3))


@pytest.mark.needs_gem5
def test_the_runner_measures_a_32_bit_run_on_gem5(
        tmp_path: Path, cached_builds_or_skip: Callable[..., gem5_builds.Builds]) -> None:
    """One short run of the A15 model through the runner, into the cache
    (the boot is the one c3-arm32-pan's one-core pan-off run uses)."""
    builds = cached_builds_or_skip("arm32-pan-off")
    text = ARM32.replace('"1000", "2000", "5"', '"10", "50", "2"').replace(
        "iterations = 2000", "iterations = 50").replace(
        '["arm32-pan-off", "arm32-sw-pan"]', '["arm32-pan-off"]').replace("[1, 2]", "[1]")
    experiment = _load(tmp_path, text)
    gem5 = simulate.Gem5Runner(simulate.RepoState.read())
    runner.run_experiments([experiment], builds, gem5, 1, tmp_path / "results")
    with (tmp_path / "results" / "probe32.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    per_call = {r["sample"]: float(r["value"]) for r in rows
                if r["metric"] == "instructions_per_iteration"}
    assert sorted(per_call) == ["0", "1"]
    assert all(100 < v < 200 for v in per_call.values())
    assert builds.initramfs is not None
    assert {r["disk_build"] for r in rows} == {builds.initramfs.key}
    assert cache.Entry("runs", rows[0]["run"], cache.cache_root()).exists()
