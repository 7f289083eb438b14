#!/usr/bin/env bash
# Installs what the artifact needs on Debian 12 / Ubuntu, idempotently.
# Run as root (or with passwordless sudo). Prints one line per step.
# --list prints the package names only.
set -euo pipefail

PACKAGES=(
	# gem5 build
	build-essential scons m4 zlib1g-dev libprotobuf-dev protobuf-compiler
	libprotoc-dev libgoogle-perftools-dev libhdf5-dev libpng-dev python3-dev
	python3-venv pkg-config git
	# cross toolchain for the kernel, m5, bootloaders and guest programs
	gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
	# 32-bit Arm kernels and their initramfs (claim C3 on QEMU vexpress-a15)
	gcc-arm-linux-gnueabihf
	# kernel build
	bc flex bison libssl-dev libelf-dev cpio kmod ccache rsync patch xz-utils
	# disk image
	e2fsprogs dpkg-dev
	# the Buildroot-built disk image (make disk ROOTFS=buildroot): the host tools
	# Buildroot checks for, and the keyring apt-get source checks Debian's
	# source index with
	wget unzip file bzip2 diffutils debian-archive-keyring
	# its test asks the image's busybox for its applets in user-mode QEMU
	qemu-user-static
	# the Slurm backend (sbatch, squeue) and its test's one-node cluster
	slurm-client slurmctld slurmd munge
)
# Reference runs of the guest's MTE selftests (-machine virt,mte=on) need a
# QEMU without issue 1416 (7.2 keeps one tag byte per page, so STG tags every
# other granule of the page); Debian 12's own QEMU is 7.2, its backports have
# a fixed one.
QEMU_PACKAGE=qemu-system-arm
QEMU_RELEASE=()
# The kernels are built from Debian's linux-source-6.12 at the version the
# committed results name (their kernel_source column): a newer one, which
# the security archive ships every few weeks, gives every kernel, disk image
# and run a new key, so nothing would be reused or compared bit for bit.
LINUX_SOURCE_PACKAGE=linux-source-6.12
LINUX_SOURCE_VERSION=6.12.117-1~deb12u1

# --list: the packages, one a line, installing nothing (make dist bundles them).
if [ "${1:-}" = --list ]; then
	printf '%s\n' "${PACKAGES[@]}" "$LINUX_SOURCE_PACKAGE" "$QEMU_PACKAGE"
	exit 0
fi

die() { echo "make deps: error: $*" >&2; exit 1; }

command -v apt-get >/dev/null || die "apt-get not found: this script supports Debian/Ubuntu only"
if [ "$(id -u)" -eq 0 ]; then
	SUDO=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
	SUDO=(sudo -n)
else
	die "installing packages needs root (run 'sudo make deps')"
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
installed_linux=$(dpkg-query -W -f='${Version}' "$LINUX_SOURCE_PACKAGE" 2>/dev/null || true)
need_linux=0
[ "$installed_linux" = "$LINUX_SOURCE_VERSION" ] || need_linux=1
need_backports=0
if ! qemu-system-aarch64 --version 2>/dev/null | head -1 | grep -Eq 'version ([89]|[1-9][0-9])\.'; then
	# shellcheck disable=SC1091
	if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" = bookworm ]; then
		QEMU_RELEASE=(-t bookworm-backports)
		[ -e /etc/apt/sources.list.d/bookworm-backports.sources ] || need_backports=1
	fi
	missing+=("$QEMU_PACKAGE")
fi
need_arm64=0
dpkg --print-foreign-architectures | grep -qx arm64 || need_arm64=1

if [ ${#missing[@]} -eq 0 ] && [ $need_arm64 -eq 0 ] && [ $need_backports -eq 0 ] &&
	[ $need_linux -eq 0 ]; then
	echo "make deps: system packages already installed"
	exit 0
fi
if [ $need_arm64 -eq 1 ]; then
	echo "make deps: adding the arm64 architecture (for apt-get download of guest packages)"
	"${SUDO[@]}" dpkg --add-architecture arm64
fi
if [ $need_backports -eq 1 ]; then
	echo "make deps: adding bookworm-backports (for QEMU >= 8.0)"
	printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: bookworm-backports" \
		"Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" |
		"${SUDO[@]}" tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
fi
echo "make deps: apt-get update"
"${SUDO[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
	echo "make deps: installing ${missing[*]}"
	others=()
	for pkg in "${missing[@]}"; do [ "$pkg" = "$QEMU_PACKAGE" ] || others+=("$pkg"); done
	if [ ${#others[@]} -gt 0 ]; then
		"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${others[@]}" >/dev/null
	fi
	if [ ${#others[@]} -ne ${#missing[@]} ]; then
		"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			"${QEMU_RELEASE[@]}" "$QEMU_PACKAGE" >/dev/null
	fi
fi
if [ $need_linux -eq 1 ]; then
	# madison's output is taken whole first: grep -q would stop reading it,
	# and under pipefail the killed writer would fail the test.
	offered=$(apt-cache madison "$LINUX_SOURCE_PACKAGE")
	if grep -qF " $LINUX_SOURCE_VERSION " <<<"$offered"; then
		echo "make deps: installing $LINUX_SOURCE_PACKAGE $LINUX_SOURCE_VERSION (the committed results' kernel source)"
		"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --allow-downgrades \
			"$LINUX_SOURCE_PACKAGE=$LINUX_SOURCE_VERSION" >/dev/null
	elif [ -n "$installed_linux" ]; then
		echo "make deps: warning: apt no longer has $LINUX_SOURCE_PACKAGE $LINUX_SOURCE_VERSION; keeping $installed_linux, so kernels and runs get new keys (make compare then judges by tolerance)" >&2
	else
		echo "make deps: warning: apt has no $LINUX_SOURCE_PACKAGE $LINUX_SOURCE_VERSION; installing its newest, so kernels and runs get new keys (make compare then judges by tolerance)" >&2
		"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$LINUX_SOURCE_PACKAGE" >/dev/null
	fi
fi
echo "make deps: done"
