################################################################################
#
# guest-selftests
#
################################################################################

GUEST_SELFTESTS_VERSION = local
GUEST_SELFTESTS_SITE = $(ARM_HARDENING_DISK_IMAGE)/selftests
GUEST_SELFTESTS_SITE_METHOD = local
GUEST_SELFTESTS_LIST = $(shell sed -e 's/\#.*//' $(GUEST_SELFTESTS_SITE)/list)

# The kernel tree is shared and read-only: kbuild's objects and the UAPI
# headers go to the package's build directory (O=, INSTALL_HDR_PATH=). The
# selftests keep debug information (-g); the tree's place in the cache is
# mapped out of it, so the image does not depend on where the cache is.
define GUEST_SELFTESTS_BUILD_CMDS
	$(MAKE) -s -C $(GUEST_KERNEL_TREE) O=$(@D)/kernel-obj ARCH=arm64 \
		INSTALL_HDR_PATH=$(@D)/kernel-headers headers_install
	$(MAKE) -s -C $(@D) \
		CROSS_CC="$(ARM_HARDENING_CC) -ffile-prefix-map=$(GUEST_KERNEL_TREE)=linux" \
		KERNEL_TREE=$(GUEST_KERNEL_TREE) \
		KERNEL_HEADERS=$(@D)/kernel-headers/include OUT=$(@D)/out
endef

define GUEST_SELFTESTS_INSTALL_TARGET_CMDS
	$(foreach t,$(GUEST_SELFTESTS_LIST),\
		$(INSTALL) -D -m 0755 $(@D)/out/$(t) $(TARGET_DIR)/selftests/$(t)$(sep))
endef

$(eval $(generic-package))
