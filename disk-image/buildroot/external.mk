# The guest's own packages take what lies outside Buildroot's reach from make's
# command line (builders/buildroot.py passes them): machine paths stay out of
# the defconfig, and a missing one stops the build with its name.
ARM_HARDENING_DISK_IMAGE = $(BR2_EXTERNAL_ARM_HARDENING_PATH)/..
ARM_HARDENING_INPUTS = GUEST_TOOLCHAIN GUEST_GEM5_TOOLS GUEST_KERNEL_TREE GUEST_BUSYBOX_APPLETS

ifeq ($(BR_BUILDING),y)
$(foreach v,$(ARM_HARDENING_INPUTS),$(if $($(v)),,$(error $(v) is not set: build with 'make disk ROOTFS=buildroot', which sets $(ARM_HARDENING_INPUTS))))
endif

# Buildroot pins patchelf 0.13, whose source no Debian release carries, and uses
# it only to rewrite RPATHs. Nothing in this guest has one (every program is
# static), so the host package is left out and the RPATH pass runs 'true'.
PACKAGES := $(filter-out host-patchelf,$(PACKAGES))
export PATCHELF = true

# The guest programs must be the same code, laid out the same, as in the
# default image, which uses the compiler's and linker's defaults. Buildroot's
# compiler wrapper adds -mcpu for its selected core unless the command line
# names an architecture (the compiler's default is armv8-a), links with 4 KiB
# maximum page size and, for reproducibility, without a build ID. The
# defaults come after its options, so they win: 64 KiB maximum and 4 KiB
# common page size (the linker's AArch64 defaults) and Debian's SHA-1 build
# ID, which is a hash of the contents and so reproducible too.
ARM_HARDENING_CC = $(TARGET_CC) -march=armv8-a \
	-Wl,-z,max-page-size=65536 -Wl,-z,common-page-size=4096 -Wl,--build-id=sha1

include $(sort $(wildcard $(BR2_EXTERNAL_ARM_HARDENING_PATH)/package/*/*.mk))
