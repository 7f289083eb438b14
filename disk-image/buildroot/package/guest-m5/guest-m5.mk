################################################################################
#
# guest-m5
#
################################################################################

GUEST_M5_VERSION = local
GUEST_M5_SITE = $(GUEST_GEM5_TOOLS)
GUEST_M5_SITE_METHOD = local
GUEST_M5_INSTALL_STAGING = YES

define GUEST_M5_INSTALL_STAGING_CMDS
	$(INSTALL) -D -m 0644 $(@D)/libm5.a $(STAGING_DIR)/usr/lib/libm5.a
	mkdir -p $(STAGING_DIR)/usr/include/m5
	cp -a $(@D)/include/. $(STAGING_DIR)/usr/include/m5/
endef

define GUEST_M5_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0755 $(@D)/m5 $(TARGET_DIR)/sbin/m5
endef

$(eval $(generic-package))
