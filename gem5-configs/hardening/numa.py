"""How many cores and NUMA nodes the machine has, and what makes two nodes two.

One node is the machine every experiment had so far: all cores share one L3
and one memory. Two nodes split the cores evenly; each node has its own L3
and half of the memory (its own controllers, as a second socket would), and
the guest is told so by the devicetree (``numa-node-id`` on every CPU and
memory node, and a ``numa-distance-map-v1`` distance map, which Linux's
``CONFIG_NUMA`` reads through OF_NUMA). Each CPU's ``socket_id`` is its node:
MPIDR Aff1 then differs between nodes, and the TLBI timing counts the other
nodes a broadcast must reach by socket id.

Classic memory stays coherent only where the nodes' paths meet, so both
nodes' L3s join one system bus above all memory; a ``NodeLinkDelay`` between
each L3 and that bus adds what leaving the node costs (``node_link.*``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from m5.objects import AddrRange, BaseCPU, NodeLinkDelay, Port
from m5.util.convert import toMemorySize
from m5.util.fdthelper import FdtNode, FdtPropertyStrings, FdtPropertyWords

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.boards.arm_board import ArmBoard
from gem5.components.memory.abstract_memory_system import AbstractMemorySystem

from hardening.catalog import BadTopology, check_topology

# Linux's LOCAL_DISTANCE and REMOTE_DISTANCE (include/linux/topology.h), what
# firmware reports for a directly linked second socket.
LOCAL_DISTANCE = 10
REMOTE_DISTANCE = 20
NODE_LINK_ROOT = "node_link"
# Assumptions (no public two-socket Altra figure was found; see
# docs/parameter-sources.md), to be swept with --param node_link.*:
# a remote DRAM access about 100 ns slower than a local one, and a line
# supplied by the other node's caches about as much later.
REMOTE_LATENCY = "100ns"
SNOOP_LATENCY = "100ns"


@dataclass(frozen=True)
class Topology:
    """``cores`` cores split evenly over ``nodes`` NUMA nodes; core i is in
    node i // (cores / nodes)."""

    cores: int = 1
    nodes: int = 1

    def __post_init__(self) -> None:
        check_topology(self.cores, self.nodes)

    @property
    def cores_per_node(self) -> int:
        return self.cores // self.nodes

    def node_of(self, core: int) -> int:
        return core // self.cores_per_node

    def cores_of(self, node: int) -> range:
        return range(node * self.cores_per_node, (node + 1) * self.cores_per_node)

    def place(self, cpus: Sequence[BaseCPU]) -> None:
        """Give each CPU its node as socket id (MPIDR Aff1, devicetree reg)."""
        for index, cpu in enumerate(cpus):
            cpu.socket_id = self.node_of(index)


class NodeMemory(AbstractMemorySystem):
    """One memory system per node, each with an equal share of the size.

    The board hands it one range (its memory from the platform's base); it
    gives node i the i-th equal part, so node 0's memory comes first."""

    def __init__(self, make_memory: Callable[[str], AbstractMemorySystem], size: str,
                 nodes: int) -> None:
        super().__init__()
        total = toMemorySize(size)
        if total % (nodes * 1024 * 1024):
            raise BadTopology(f"memory {size} does not split into {nodes} whole-MiB nodes")
        self._share = total // nodes
        self.node_memories = [make_memory(f"{self._share}B") for _ in range(nodes)]
        self._ranges: list[AddrRange] = []

    def node_ranges(self) -> list[AddrRange]:
        return list(self._ranges)

    def incorporate_memory(self, board: AbstractBoard) -> None:
        for memory in self.node_memories:
            memory.incorporate_memory(board)

    def get_mem_ports(self) -> list[tuple[AddrRange, Port]]:
        return [port for memory in self.node_memories for port in memory.get_mem_ports()]

    def get_memory_controllers(self) -> list:
        return [ctrl for memory in self.node_memories
                for ctrl in memory.get_memory_controllers()]

    def get_size(self) -> int:
        return self._share * len(self.node_memories)

    def set_memory_range(self, ranges: list[AddrRange]) -> None:
        if len(ranges) != 1 or ranges[0].size() != self.get_size():
            raise BadTopology("node memory needs one range of its whole size, got "
                              f"{[str(r) for r in ranges]}")
        start = int(ranges[0].start)
        self._ranges = [AddrRange(start=start + i * self._share, size=self._share)
                        for i in range(len(self.node_memories))]
        for memory, node_range in zip(self.node_memories, self._ranges):
            memory.set_memory_range([node_range])

    def get_uninterleaved_range(self) -> list[AddrRange]:
        return self.node_ranges()


class NumaArmBoard(ArmBoard):
    """An ArmBoard whose memory ranges and devicetree describe its nodes."""

    def __init__(self, topology: Topology, **kwargs) -> None:
        self._topology = topology
        super().__init__(**kwargs)

    def _setup_board(self) -> None:
        super()._setup_board()
        # One devicetree memory node per range: one per node.
        self.mem_ranges = self.get_memory().node_ranges()

    def generateDeviceTree(self, state):
        root = super().generateDeviceTree(state)
        ranges = self.get_memory().node_ranges()
        for child in root:
            name = child.get_name()
            if isinstance(child, FdtNode) and name.startswith("memory@"):
                start = int(name.partition("@")[2], 16)
                node = next(i for i, r in enumerate(ranges) if int(r.start) == start)
                child.append(FdtPropertyWords("numa-node-id", [node]))
            elif isinstance(child, FdtNode) and name == "cpus":
                for cpu in child:
                    if isinstance(cpu, FdtNode) and cpu.get_name().startswith("cpu@"):
                        # reg = socket_id << 8 | cpu_id, and socket_id is the node
                        reg = int(cpu.get_name().partition("@")[2], 16)
                        cpu.append(FdtPropertyWords("numa-node-id", [reg >> 8]))
        distances = FdtNode("distance-map")
        distances.append(FdtPropertyStrings("compatible", ["numa-distance-map-v1"]))
        matrix = [word for a in range(self._topology.nodes) for b in range(self._topology.nodes)
                  for word in (a, b, LOCAL_DISTANCE if a == b else REMOTE_DISTANCE)]
        distances.append(FdtPropertyWords("distance-matrix", matrix))
        root.append(distances)
        return root


def make_memory(topology: Topology, make: Callable[[str], AbstractMemorySystem],
                size: str) -> AbstractMemorySystem:
    """The core model's memory, or one of it per node."""
    return make(size) if topology.nodes == 1 else NodeMemory(make, size, topology.nodes)


def make_node_links(topology: Topology) -> list[NodeLinkDelay]:
    """One link per node (none for one node); remote ranges set on wiring."""
    if topology.nodes == 1:
        return []
    return [NodeLinkDelay(remote_latency=REMOTE_LATENCY, snoop_latency=SNOOP_LATENCY)
            for _ in range(topology.nodes)]

