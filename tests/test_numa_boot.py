"""The two-node machine: the guest sees two NUMA nodes, and a detailed run
restored from a two-node boot reports the traffic between them.

Needs gem5 and a kernel with CONFIG_NUMA (contpte-batched, claim C5's
mainline arm) in the build cache; without them it is skipped with one line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from experiments import gem5_commands
from experiments.gem5_builds import Builds
from experiments.gem5_commands import GuestScript
from experiments.raw_outputs import SimulationFailed
from support.real_gem5 import rows_by_metric, run_definition, run_gem5

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
    return run_gem5(builds, NUMA_KERNEL, out, mode, *args, max_ticks=MAX_TICKS,
                    label="numa test")


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
    rows = rows_by_metric(run_definition(PROBE, builds, tmp_path))
    assert rows["instructions"]["cores"] == "4" and rows["instructions"]["nodes"] == "2"
    # Children on both nodes: memory of the other node is read, lines cross.
    assert float(rows["remote_memory_responses"]["value"]) > 0
    assert float(rows["cross_node_snoop_responses"]["value"]) > 0
    assert float(rows["broadcast_tlbis"]["value"]) > 0
