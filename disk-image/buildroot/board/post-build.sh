#!/bin/sh
# Buildroot's post-build step for the guest: $1 is output/target.
#
# Buildroot has no static-only system with glibc, so it installs glibc's shared
# libraries and nsswitch.conf, the lib64 links and /usr directories, and an
# /etc/shells entry. Every program in this guest is static (static glibc reads
# no NSS configuration it could use) and nothing reads /etc/shells: they go,
# and the image holds what the default image holds, plus Buildroot's
# os-release (which records the Buildroot version that made it).
set -eu
target=$1
rm -rf "$target/lib" "$target/lib64" "$target/usr/bin" "$target/usr/sbin" \
	"$target/usr/lib64" "$target/etc/shells" "$target/etc/nsswitch.conf"
find "$target/usr/lib" -mindepth 1 -maxdepth 1 ! -name os-release -exec rm -rf {} +
