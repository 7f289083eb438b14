"""Classic-cache hierarchies. Arm64 cores: private L1I, L1D and L2 per core, an L3 per node.

Page-table walks enter at the core's L2 bus, as they do on the A76/Neoverse
cores, whose walkers look up the L2 (A76-TRM). With MTE, an ``MteTagTiming``
(``hardening/mte_timing.py``) sits between the L3 and the memory bus. With two
nodes, each node's L3 reaches the memory bus through its ``NodeLinkDelay``
(``hardening/numa.py``); with one, the L3 is wired to the bus directly.
"""

from __future__ import annotations

from collections.abc import Callable

from m5.objects import BadAddr, Cache, L2XBar, Port, SimObject, SystemXBar
from m5.util.convert import toMemorySize

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.cachehierarchies.classic.abstract_classic_cache_hierarchy import (
    AbstractClassicCacheHierarchy,
)
from gem5.utils.override import overrides

from hardening.mte_timing import place_tag_carve_out
from hardening.numa import Topology, make_node_links


class _MemoryBusHierarchy(AbstractClassicCacheHierarchy):
    """What both hierarchies share: the memory bus (with a responder for
    unmapped addresses) that the last cache level, the board's system port and
    the memory hang off, and the small cache that keeps DMA coherent."""

    def _make_membus(self) -> None:
        self.membus = SystemXBar(width=64)

    def _terminate_membus(self) -> None:
        self.membus.badaddr_responder = BadAddr()
        self.membus.default = self.membus.badaddr_responder.pio

    @overrides(AbstractClassicCacheHierarchy)
    def get_mem_side_port(self) -> Port:
        return self.membus.mem_side_ports

    @overrides(AbstractClassicCacheHierarchy)
    def get_cpu_side_port(self) -> Port:
        return self.membus.cpu_side_ports

    def _connect_board_and_memory(self, board: AbstractBoard) -> None:
        board.connect_system_port(self.membus.cpu_side_ports)
        for _, port in board.get_memory().get_mem_ports():
            self.membus.mem_side_ports = port

    def _connect_coherent_io(self, board: AbstractBoard) -> None:
        if board.has_coherent_io():
            # DMA (virtio-blk) stays coherent with the cores through a small cache.
            self.iocache = Cache(assoc=8, tag_latency=50, data_latency=50,
                                 response_latency=50, mshrs=20, size="1KiB",
                                 tgts_per_mshr=12, addr_ranges=board.mem_ranges)
            self.iocache.mem_side = self.membus.cpu_side_ports
            self.iocache.cpu_side = board.get_mem_side_coherent_io_port()


class PrivateL1L2SharedL3(_MemoryBusHierarchy):
    """Cache factories come from the core model, so every parameter lives there."""

    def __init__(self, topology: Topology, make_l1i: Callable[[], Cache],
                 make_l1d: Callable[[], Cache], make_l2: Callable[[], Cache],
                 make_l3: Callable[[], Cache], mte_tags: SimObject | None = None) -> None:
        """``mte_tags``: the ``MteTagTiming`` of ``mte_timing.make_mte_tag_timing``,
        put between the L3 and the memory bus, or None (no MTE, or atomic)."""
        AbstractClassicCacheHierarchy.__init__(self)
        assert mte_tags is None or topology.nodes == 1, "tag timing models one memory"
        self._topology = topology
        cores, nodes = topology.cores, topology.nodes
        # Built here rather than when wired, so parameter overrides can reach them.
        # A list of one is named like a single object (l3, not l30): one-node
        # statistics keep their names.
        self.l1i = [make_l1i() for _ in range(cores)]
        self.l1d = [make_l1d() for _ in range(cores)]
        self.l2 = [make_l2() for _ in range(cores)]
        self.l2bus = [L2XBar() for _ in range(cores)]
        self.l3 = [make_l3() for _ in range(nodes)]
        self.l3bus = [L2XBar() for _ in range(nodes)]
        self._node_links = make_node_links(topology)
        if self._node_links:
            self.node_link = self._node_links
        self._make_membus()
        if cores > 1:
            # The snoop filters track every line held above them; gem5 panics
            # when one overflows, so size them for what they can see.
            l2_bytes = sum(toMemorySize(str(c.size)) for c in self.l2) // nodes
            for bus in self.l3bus:
                bus.snoop_filter.max_capacity = f"{max(l2_bytes, 8 << 20)}B"
            above = sum(toMemorySize(str(c.size)) for c in (*self.l2, *self.l3))
            self.membus.snoop_filter.max_capacity = f"{max(above, 8 << 20)}B"
        self._terminate_membus()
        self._mte_tags = mte_tags
        if mte_tags is not None:
            self.mte_tags = mte_tags

    def node_links(self) -> list[SimObject]:
        """The links between the nodes' L3s and the memory bus (none for one node)."""
        return list(self._node_links)

    @overrides(AbstractClassicCacheHierarchy)
    def incorporate_cache(self, board: AbstractBoard) -> None:
        self._connect_board_and_memory(board)

        ranges = board.mem_ranges
        for node, (l3, l3bus) in enumerate(zip(self.l3, self.l3bus)):
            l3.cpu_side = l3bus.mem_side_ports
            if self._mte_tags is not None:
                place_tag_carve_out(self.mte_tags, int(ranges[0].start))
                l3.mem_side = self.mte_tags.cpu_side
                self.mte_tags.mem_side = self.membus.cpu_side_ports
            elif self._node_links:
                link = self._node_links[node]
                link.remote_ranges = [r for i, r in enumerate(ranges) if i != node]
                l3.mem_side = link.cpu_side_port
                link.mem_side_port = self.membus.cpu_side_ports
            else:
                l3.mem_side = self.membus.cpu_side_ports

        cores = board.get_processor().get_cores()
        assert len(cores) == len(self.l1i), "hierarchy built for another core count"
        for i, core in enumerate(cores):
            core.connect_icache(self.l1i[i].cpu_side)
            core.connect_dcache(self.l1d[i].cpu_side)
            self.l1i[i].mem_side = self.l2bus[i].cpu_side_ports
            self.l1d[i].mem_side = self.l2bus[i].cpu_side_ports
            core.connect_walker_ports(self.l2bus[i].cpu_side_ports,
                                      self.l2bus[i].cpu_side_ports)
            self.l2bus[i].mem_side_ports = self.l2[i].cpu_side
            self.l2[i].mem_side = self.l3bus[self._topology.node_of(i)].cpu_side_ports
            core.connect_interrupt()

        self._connect_coherent_io(board)


class ClusterL1SharedL2(_MemoryBusHierarchy):
    """One cluster as a Cortex-A15 MPCore builds it: private L1I and L1D per
    core, one L2 shared by all of them (its snoop control unit is the L2
    crossbar here), then memory. No L3. Page-table walks enter at the L2
    crossbar, as in the arm64 hierarchy above."""

    def __init__(self, cores: int, make_l1i: Callable[[], Cache],
                 make_l1d: Callable[[], Cache], make_l2: Callable[[], Cache]) -> None:
        AbstractClassicCacheHierarchy.__init__(self)
        # Built here rather than when wired, so parameter overrides can reach them.
        self.l1i = [make_l1i() for _ in range(cores)]
        self.l1d = [make_l1d() for _ in range(cores)]
        self.l2bus = L2XBar()
        self.l2 = make_l2()
        self._make_membus()
        self._terminate_membus()

    @overrides(AbstractClassicCacheHierarchy)
    def incorporate_cache(self, board: AbstractBoard) -> None:
        self._connect_board_and_memory(board)
        self.l2.cpu_side = self.l2bus.mem_side_ports
        self.l2.mem_side = self.membus.cpu_side_ports

        cores = board.get_processor().get_cores()
        assert len(cores) == len(self.l1i), "hierarchy built for another core count"
        for i, core in enumerate(cores):
            core.connect_icache(self.l1i[i].cpu_side)
            core.connect_dcache(self.l1d[i].cpu_side)
            self.l1i[i].mem_side = self.l2bus.cpu_side_ports
            self.l1d[i].mem_side = self.l2bus.cpu_side_ports
            core.connect_walker_ports(self.l2bus.cpu_side_ports, self.l2bus.cpu_side_ports)
            core.connect_interrupt()

        self._connect_coherent_io(board)
