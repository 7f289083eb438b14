################################################################################
#
# guest-init
#
################################################################################

GUEST_INIT_VERSION = local
GUEST_INIT_SITE = $(ARM_HARDENING_DISK_IMAGE)/rootfs
GUEST_INIT_SITE_METHOD = local
GUEST_INIT_DEPENDENCIES = busybox

# The links name the applets of the default image's list (builders/disk.py
# passes it), not every applet this busybox has: the two images then offer the
# same commands on the same paths. The files come from the site itself: the
# build directory also holds Buildroot's stamp files.
define GUEST_INIT_INSTALL_TARGET_CMDS
	rsync -a $(GUEST_INIT_SITE)/ $(TARGET_DIR)/
	$(foreach a,$(GUEST_BUSYBOX_APPLETS),ln -sfn busybox '$(TARGET_DIR)/bin/$(a)'$(sep))
endef

$(eval $(generic-package))
