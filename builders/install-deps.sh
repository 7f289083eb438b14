#!/usr/bin/env bash
# Installs what the artifact needs on Debian 12 / Ubuntu, idempotently.
# Run as root (or with passwordless sudo). Prints one line per step.
set -euo pipefail

PACKAGES=(
	# gem5 build
	build-essential scons m4 zlib1g-dev libprotobuf-dev protobuf-compiler
	libprotoc-dev libgoogle-perftools-dev libhdf5-dev libpng-dev python3-dev
	python3-venv pkg-config git
	# cross toolchain for the kernel, m5, bootloaders and guest programs
	gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
	# kernel build
	bc flex bison libssl-dev libelf-dev cpio kmod ccache rsync patch xz-utils
	linux-source-6.12
	# disk image
	e2fsprogs dpkg-dev
	# reference runs of the guest's MTE selftests on QEMU (-machine virt,mte=on)
	qemu-system-arm
)

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
need_arm64=0
dpkg --print-foreign-architectures | grep -qx arm64 || need_arm64=1

if [ ${#missing[@]} -eq 0 ] && [ $need_arm64 -eq 0 ]; then
	echo "make deps: system packages already installed"
	exit 0
fi
if [ $need_arm64 -eq 1 ]; then
	echo "make deps: adding the arm64 architecture (for apt-get download of guest packages)"
	"${SUDO[@]}" dpkg --add-architecture arm64
fi
echo "make deps: apt-get update"
"${SUDO[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
	echo "make deps: installing ${missing[*]}"
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "make deps: done"
