"""The two-node machine: the guest sees two NUMA nodes, and a detailed run
restored from a two-node boot reports the traffic between them.

Needs gem5 and a kernel with CONFIG_NUMA (contpte-batched, claim C5's
mainline arm) in the build cache; without them it is skipped with one line.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

from experiments import gem5_commands, raw_outputs, runner, simulate, spec
from experiments.gem5_builds import Builds
from experiments.gem5_commands import GuestScript
from experiments.raw_outputs import SimulationFailed

pytestmark = pytest.mark.needs_gem5
NUMA_KERNEL = "contpte-batched"
MAX_TICKS = 5 * 10**12
NODES_SCRIPT = """\
for node in /sys/devices/system/node/node*; do
  echo "$(basename $node) cpus=$(cat $node/cpulist) distance=$(cat $node/distance)"
done
"""


@pytest.fixture(scope="module")
def builds(cached_builds_or_skip: Callable[..., Builds]) -> Builds:
    return cached_builds_or_skip(NUMA_KERNEL)


def _gem5(builds: Builds, out: Path, mode: str, *args: gem5_commands.Arg) -> str:
    simulation = gem5_commands.Simulation(
        "runs", (mode, *gem5_commands._files(builds, NUMA_KERNEL), *args), "numa test",
        NUMA_KERNEL, MAX_TICKS, builds)
    simulate.Gem5Runner(simulate.RepoState("test", False)).run(simulation, out)
    return (out / "m5out" / raw_outputs.CONSOLE).read_text(errors="replace")


def test_guest_sees_two_nodes_with_their_cores_and_distances(builds: Builds,
                                                             tmp_path: Path) -> None:
    console = _gem5(builds, tmp_path, "direct", "--cpu", "atomic", "--cores", "4",
                    "--numa-nodes", "2", "--max-ticks", str(MAX_TICKS),
                    "--script", GuestScript(NODES_SCRIPT))
    assert "node0 cpus=0-1 distance=10 20" in console
    assert "node1 cpus=2-3 distance=20 10" in console


def test_mte_on_two_nodes_is_refused(builds: Builds, tmp_path: Path) -> None:
    with pytest.raises(SimulationFailed, match="(?s)status 2.*one NUMA node only"):
        _gem5(builds, tmp_path, "measure", "--check", "--checkpoint", str(tmp_path),
              "--script", GuestScript("true\n"), "--core", "neoverse-n1", "--features", "mte",
              "--cores", "2", "--numa-nodes", "2")


PROBE = f"""
name = "numa-probe"
benchmark = "exit_bench"
core_count = 4
[matrix]
cores = ["neoverse-n1"]
variants = ["{NUMA_KERNEL}"]
features = ["pan"]
nodes = [2]
params = [["node_link.remote_latency=150ns", "tlbi.per_other_node=200ns"]]
[[workloads]]
name = "exit-spread"
args = ["exit", "4", "2", "0", "2"]
iterations = 2
"""


def test_two_node_run_restores_and_reports_cross_node_traffic(builds: Builds,
                                                              tmp_path: Path) -> None:
    (tmp_path / "numa-probe.toml").write_text(PROBE)
    experiment = spec.load("numa-probe", tmp_path)
    gem5 = simulate.Gem5Runner(simulate.RepoState.read())
    (target,) = runner.run_experiments([experiment], builds, gem5, 1, tmp_path / "results")
    with target.open() as handle:
        rows = {r["metric"]: r for r in csv.DictReader(handle)}
    assert rows["instructions"]["cores"] == "4" and rows["instructions"]["nodes"] == "2"
    # Children on both nodes: memory of the other node is read, lines cross.
    assert float(rows["remote_memory_responses"]["value"]) > 0
    assert float(rows["cross_node_snoop_responses"]["value"]) > 0
    assert float(rows["broadcast_tlbis"]["value"]) > 0
