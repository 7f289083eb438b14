"""Timing of MTE allocation-tag storage (gem5 patches 0010 and 0012, ``MteTagTiming``).

The allocation tags themselves live in gem5's functional tag store (patch
0007); what a tag fetch costs is modelled between the shared L3 and the memory
bus, on the misses the MMU marked as tag checked (patch 0010). Two models,
picked per run with ``--param mte_tags.mode=...``:

``with_data``
    Tags travel with their data line: a tag-checked read miss only costs
    ``extra_latency`` cycles more, with no extra memory traffic and no memory
    set aside. This stands for designs that keep tags beside the data in the
    DRAM system without a separate access, such as AmpereOne, whose MTE
    "incurs no memory capacity overhead for tag storage" and adds a
    single-digit performance cost in synchronous mode (Kaushik et al.,
    "Optimized Memory Tagging on AmpereOne Processors", arXiv:2511.17773,
    2025; the paper is the source of both claims, not of how the tags are
    stored, which we do not model).

``tag_cache``
    Tags live in a carve-out of the same DRAM, 4 bits per 16-byte granule
    (1/32 of the tagged memory, from the architecture's 4-bit tag per
    16-byte granule), like QEMU's ``virt`` machine, which backs tags with a
    separate RAM region of a 32nd of guest RAM (``hw/arm/virt.c``; see
    ``docs/parameter-sources.md``, MTE allocation-tag storage). A
    small tag cache (``tag_cache_size``, ``tag_cache_assoc``,
    ``tag_cache_latency``) holds 64-byte tag lines, each covering 2 KiB of
    data; a tag-cache miss reads the tag line from memory through the memory
    bus, in parallel with the data, and the data waits for it. Tag reads
    are gem5 memory traffic of their own requestor
    (``board.cache_hierarchy.mte_tags``), so they show in the memory
    controllers' statistics. Tag write-backs (STG and friends) are not
    modelled: tag writes stay functional and free.

In both models a hardware prefetch is charged like a tag-checked miss when it
reads one of the ``tagged_pages`` 4 KiB pages that recent tag-checked misses came
from (gem5 patch 0012): the prefetcher's own request does not carry the MMU's
mark, but a real core fetches the tags of every line of a Tagged page it reads.

Default: ``tag_cache``. It is the layout that needs no special DRAM (an
ordinary carve-out), it charges tag fetches as real memory traffic rather
than a guessed constant, and ``with_data`` remains a one-parameter switch
that gives the cheaper end. The sizes and latencies below are our
assumptions, not published figures of any core: no public source we found
gives the tag-cache geometry of a shipping MTE design.

The carve-out exists whenever ``mte`` is among the run's features, on the
atomic boot as on the detailed restore, so a checkpoint's memory layout is the
same either way: the memory is 1/32 larger than ``--memory`` and the kernel
gets ``mem=<--memory>``, so Linux never uses the carve-out. ``MteTagTiming``
itself is built only for detailed (o3) runs with ``mte``. Runs without
``mte`` have neither the object nor the larger memory: they are unchanged.
"""

from __future__ import annotations

from m5.SimObject import SimObject
from m5.util.convert import toMemorySize

from hardening.features import FeatureNotSupported

# 4-bit tag per 16-byte granule: a byte of tags per 32 bytes of data.
DATA_BYTES_PER_TAG_BYTE = 32
MIB = 1 << 20
DEFAULT_MODE = "tag_cache"


class BadMemorySize(ValueError):
    """An mte run's memory cannot get a whole-MiB tag carve-out."""


def guest_bytes(guest_memory: str) -> int:
    size = toMemorySize(guest_memory)
    if size % (DATA_BYTES_PER_TAG_BYTE * MIB):
        raise BadMemorySize(f"--memory {guest_memory}: with mte the memory must be a "
                            f"multiple of {DATA_BYTES_PER_TAG_BYTE} MiB (whole-MiB tag carve-out)")
    return size


def memory_with_tag_carve_out(guest_memory: str) -> str:
    """The simulated memory size of an ``mte`` run: the guest's memory plus
    its tag carve-out (a 32nd), e.g. 1GiB -> 1056MiB."""
    size = guest_bytes(guest_memory)
    return f"{(size + size // DATA_BYTES_PER_TAG_BYTE) // MIB}MiB"


def kernel_args(features: tuple[str, ...] | list[str], guest_memory: str) -> list[str]:
    """Keep Linux out of the carve-out: ``mem=`` caps the memory it uses at
    ``--memory`` (arm64 removes the rest from its memory map)."""
    if "mte" not in features:
        return []
    return [f"mem={guest_bytes(guest_memory) // MIB}M"]


def make_mte_tag_timing(features: tuple[str, ...] | list[str], detailed: bool,
                        guest_memory: str) -> SimObject | None:
    """The run's ``MteTagTiming`` with our defaults, or None when it must not
    exist (no ``mte``, or the atomic CPU, which has no caches to miss in).

    The class is imported here, not at the top, so that a gem5 without patch
    0010 still runs everything else.
    """
    if "mte" not in features or not detailed:
        return None
    try:
        from m5.objects import MteTagTiming
    except ImportError:
        raise FeatureNotSupported(
            "feature 'mte' on a detailed core needs MteTagTiming, which this gem5 "
            "build lacks (gem5 patch 0010)") from None

    tags = MteTagTiming(
        mode=DEFAULT_MODE,
        # with_data: one tag-check stage on the returning line (assumed).
        extra_latency=2,
        # 32 KiB of tag lines cover 1 MiB of data (assumed geometry).
        tag_cache_size="32KiB",
        tag_cache_assoc=8,
        tag_cache_latency=2,
        max_tag_reads=16,
        # Pages remembered for prefetches (assumed; 0 charges none).
        tagged_pages=64,
    )
    tags._guest_bytes = guest_bytes(guest_memory)
    return tags


def place_tag_carve_out(tags: SimObject, memory_start: int) -> None:
    """Tagged memory is the guest's, from ``memory_start``; its carve-out
    follows it (the board knows where memory starts only once built)."""
    tags.data_base = memory_start
    tags.data_size = f"{tags._guest_bytes}B"
    tags.tag_base = memory_start + tags._guest_bytes
