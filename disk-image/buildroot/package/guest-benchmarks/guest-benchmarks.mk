################################################################################
#
# guest-benchmarks
#
################################################################################

GUEST_BENCHMARKS_VERSION = local
GUEST_BENCHMARKS_SITE = $(ARM_HARDENING_DISK_IMAGE)/benchmarks
GUEST_BENCHMARKS_SITE_METHOD = local
GUEST_BENCHMARKS_DEPENDENCIES = guest-m5

# The benchmarks' own Makefile and flags, as the default image builds them.
define GUEST_BENCHMARKS_BUILD_CMDS
	$(MAKE) -C $(@D) CC="$(ARM_HARDENING_CC)" \
		M5_INCLUDE=$(STAGING_DIR)/usr/include/m5 \
		M5_LIB=$(STAGING_DIR)/usr/lib/libm5.a OUT=$(@D)/out
endef

define GUEST_BENCHMARKS_INSTALL_TARGET_CMDS
	mkdir -p $(TARGET_DIR)/bench
	cp -a $(@D)/out/. $(TARGET_DIR)/bench/
endef

$(eval $(generic-package))
