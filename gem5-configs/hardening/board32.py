"""A 32-bit Arm (AArch32-only, Cortex-A15 class) machine for the arm32 kernel
variants: gem5's VExpress_GEM5_V1 platform (GICv2, PL011, the V2M system
registers), the kernel's ``vmlinux`` started by gem5's 32-bit bootloader
(``boot.arm``) and an initramfs as the whole guest, no disk.

gem5's stdlib ``ArmBoard`` always builds an AArch64 system and its workload
always has a disk; this board changes only those two things.
"""

from __future__ import annotations

import re
from pathlib import Path

from m5.objects import ArmRelease, VExpress_GEM5_V1

from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.boards.arm_board import ArmBoard
from gem5.components.cachehierarchies.abstract_cache_hierarchy import AbstractCacheHierarchy
from gem5.components.memory.abstract_memory_system import AbstractMemorySystem
from gem5.components.processors.abstract_processor import AbstractProcessor
from gem5.utils.override import overrides

# The V2M-P1 system registers' SYS_FLAGS (read) / SYS_FLAGSSET (write): a 32-bit
# vexpress kernel writes the secondary CPUs' entry point there
# (vexpress_flags_set), not to a devicetree cpu-release-addr, which only arm64
# kernels read. boot.arm's secondary CPUs poll the address in r5, which gem5
# sets from the workload's cpu_release_addr.
V2M_SYS_FLAGS = 0x1C010030
# Linux's ARM console; what follows "--" is init's argv (WARMUP CALLS RUNS).
KERNEL_ARGS = ("console=ttyAMA0", "earlycon=pl011,0x1c090000", "rdinit=/init")
# init's first argument for its gem5 region markers (m5 checkpoint, readfile,
# resetstats/dumpstats around each run, exit): UNDEFINED instructions on QEMU,
# so the init issues them only when asked.
INIT_GEM5_MARKERS = "gem5"
# The initramfs's /init ends with one of these lines, then powers off. gem5's
# V2M system registers have no shutdown function, so the kernel halts instead
# ("Power off not available: System halted instead") and spins with interrupts
# off: the run ends when the console shows the line (ConsoleWatch).
# A line counts once its newline is out, not half-written.
LAST_LINE = re.compile(r"^(c3-getppid (?:done runs=\d+|error: .*))\n", re.MULTILINE)
# Without HIGHMEM (the arm32 variants have none) the kernel uses only its
# lowmem, about 760 MiB with the 3G/1G split: more memory would go unused.
MAX_MEMORY = 1 << 30


def aarch32_release() -> ArmRelease:
    """What gem5's own 32-bit regressions boot with: LPAE (a Cortex-A15 has it;
    the kernel need not use it) and neither the Security nor the Virtualization
    extension, so the cores start in SVC mode, with no monitor or hypervisor
    code needed below the kernel (it logs "All CPU(s) started in SVC mode")."""
    return ArmRelease(extensions=["LPAE"])


class Arm32Board(ArmBoard):
    """An AArch32-only ``ArmBoard`` on VExpress_GEM5_V1 that boots an initramfs."""

    def __init__(self, clk_freq: str, processor: AbstractProcessor,
                 memory: AbstractMemorySystem,
                 cache_hierarchy: AbstractCacheHierarchy) -> None:
        if memory.get_size() > MAX_MEMORY:
            raise ValueError(f"a 32-bit board takes at most {MAX_MEMORY >> 20} MiB of memory")
        super().__init__(clk_freq=clk_freq, processor=processor, memory=memory,
                         cache_hierarchy=cache_hierarchy, platform=VExpress_GEM5_V1(),
                         release=aarch32_release())

    @overrides(ArmBoard)
    def _setup_board(self) -> None:
        super()._setup_board()
        # ArmBoard hard-codes an AArch64 highest exception level; with it the
        # cores would reset into AArch64 and never run the 32-bit bootloader.
        self.highest_el_is_64 = False

    @overrides(ArmBoard)
    def _pre_instantiate(self):
        # ArmBoard's own version, less its PCI device list: gem5 cannot assign
        # an empty list of SimObjects, and a board without a disk has none.
        AbstractBoard._pre_instantiate(self)
        dtb = self._get_dtb_filename()
        self.workload.dtb_filename = dtb
        self.realview.setupBootLoader(self, dtb, self._bootloader)
        # setupBootLoader puts the release address below the DTB in memory,
        # where a 32-bit kernel never writes.
        self.workload.cpu_release_addr = V2M_SYS_FLAGS
        self.generateDtb(dtb)

    def set_initramfs_workload(self, vmlinux: Path, bootloader: Path, initramfs: Path,
                               kernel_args: tuple[str, ...] = KERNEL_ARGS,
                               checkpoint: Path | None = None,
                               readfile: Path | None = None) -> None:
        """Boot ``vmlinux`` (an ELF: gem5 places it by its physical addresses
        and sees its symbols, so a guest panic stops the run) with ``initramfs``
        loaded after the generated DTB, whose /chosen names it; or, given
        ``checkpoint``, restore the machine from it (what the stdlib's
        ``set_kernel_disk_workload`` does with its own). ``readfile`` is the
        host file the guest's m5 readfile returns."""
        self._set_fullsystem(True)
        self.workload.object_file = str(vmlinux)
        self.workload.command_line = " ".join(kernel_args)
        self.workload.initrd_filename = str(initramfs)
        self._bootloader = [str(bootloader)]
        if readfile is not None:
            self.readfile = str(readfile)
        # The stdlib Simulator restores from the board's _checkpoint.
        self._checkpoint = checkpoint


class ConsoleWatch:
    """The guest's console as gem5 writes it (the terminal file is unbuffered),
    read on from where the last look stopped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text = ""
        self._offset = 0

    def read(self) -> str:
        if self.path.is_file():
            with self.path.open("rb") as f:
                f.seek(self._offset)
                new = f.read()
            self._offset += len(new)
            self.text += new.decode(errors="replace").replace("\r", "")
        return self.text

    def last_line(self) -> str | None:
        """The init's last line (done or error), once it has printed it."""
        match = LAST_LINE.search(self.read())
        return match.group(1) if match else None
