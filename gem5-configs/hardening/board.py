"""The simulated machine: gem5's VExpress_GEM5_Foundation platform (GICv3, PL011,
PCI ECAM + virtio-blk), DDR4 memory, our kernel, bootloader and disk image; with
two NUMA nodes, a board that tells the guest so (``hardening/numa.py``)."""

from __future__ import annotations

from pathlib import Path

from m5.objects import ArmRelease, VExpress_GEM5_Foundation

from gem5.components.boards.arm_board import ArmBoard
from gem5.components.cachehierarchies.abstract_cache_hierarchy import AbstractCacheHierarchy
from gem5.components.memory.abstract_memory_system import AbstractMemorySystem
from gem5.components.processors.abstract_processor import AbstractProcessor
from gem5.resources.resource import BootloaderResource, DiskImageResource, KernelResource

from hardening.numa import NumaArmBoard, Topology

# earlycon makes a boot that dies before the console driver still print.
KERNEL_ARGS = (
    "console=ttyAMA0",
    "earlycon=pl011,0x1c090000",
    "root=/dev/vda",
    "rw",
    "norandmaps",
)


def make_board(processor: AbstractProcessor, cache_hierarchy: AbstractCacheHierarchy,
               memory: AbstractMemorySystem, clock: str, release: ArmRelease,
               topology: Topology) -> ArmBoard:
    """A checkpoint holds memory contents by address range, and the guest reads
    its NUMA layout at boot: every run restored from one must have the same
    memory size and topology (the runner keys checkpoints on both)."""
    kwargs = dict(clk_freq=clock, processor=processor, memory=memory,
                  cache_hierarchy=cache_hierarchy, platform=VExpress_GEM5_Foundation(),
                  release=release)
    return ArmBoard(**kwargs) if topology.nodes == 1 else NumaArmBoard(topology, **kwargs)


def set_workload(board: ArmBoard, vmlinux: Path, disk: Path, bootloader: Path,
                 script: str, checkpoint: Path | None = None,
                 extra_kernel_args: tuple[str, ...] = ()) -> None:
    """Boot ``vmlinux`` (an ELF, so gem5 sees kernel symbols and stops the run
    on a guest panic or oops) and hand ``script`` to the guest's init.
    ``extra_kernel_args`` (e.g. ``kasan.mode=async``) follow ours."""
    board.set_kernel_disk_workload(
        kernel=KernelResource(local_path=str(vmlinux)),
        disk_image=DiskImageResource(local_path=str(disk)),
        bootloader=BootloaderResource(local_path=str(bootloader)),
        readfile_contents=script,
        kernel_args=[*KERNEL_ARGS, *extra_kernel_args],
        checkpoint=checkpoint,
    )
