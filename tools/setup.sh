#!/usr/bin/env bash
# Prepares a Debian 12 machine to build and test userstack: packages, then
# 2 MB hugepages.  Run as root; safe to run again (a second run installs
# nothing and takes a second or two).
#
# Hugepages are best effort: containers and some kernels refuse them, and
# every userstack binary then falls back to --no-huge (config [eal]
# hugepages = auto), so a refusal is a note, not a failure.
set -euo pipefail

PACKAGES=(
	build-essential meson ninja-build pkg-config
	dpdk dpdk-dev libdpdk-dev libnuma-dev
	libcmocka-dev libpcap-dev libsodium-dev
	curl wrk tshark python3-scapy nftables iproute2 iputils-ping procps
	clang libclang-rt-14-dev
	redis-server redis-tools nginx-light
)
# bench/ (never CI): the results plot and callgrind's instruction counts.
if [[ ${1:-} == --bench ]]; then
	PACKAGES+=(python3-matplotlib valgrind)
fi
HUGEPAGES_2M=512
HUGE_MNT=/dev/hugepages

note() { printf 'setup: %s\n' "$*"; }

if [[ $(id -u) -ne 0 ]]; then
	echo "setup: run as root (it installs packages and reserves hugepages)" >&2
	exit 1
fi

missing_packages() {
	local p status
	for p in "${PACKAGES[@]}"; do
		status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[[ $status == "install ok installed" ]] || printf '%s\n' "$p"
	done
}

install_packages() {
	local missing
	mapfile -t missing < <(missing_packages)
	if [[ ${#missing[@]} -eq 0 ]]; then
		note "packages: all ${#PACKAGES[@]} already installed"
		return
	fi
	note "packages: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# tshark asks whether non-root users may capture: answer no, unattended.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections
	apt-get update -q
	# No recommends: none of these needs its recommended packages for our use
	# (scapy builds and sends packets without its optional plotting/crypto extras).
	# redis-server and nginx-light are run by the interop suite under
	# LD_PRELOAD, never as services: a policy-rc.d that refuses every start
	# keeps their packages from starting (and binding ports) at install.
	local policy=/usr/sbin/policy-rc.d made_policy=0
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\nexit 101\n' > "$policy"
		chmod 755 "$policy"
		made_policy=1
	fi
	apt-get install -y -q --no-install-recommends "${missing[@]}" || {
		[[ $made_policy -eq 0 ]] || rm -f "$policy"
		return 1
	}
	[[ $made_policy -eq 0 ]] || rm -f "$policy"
}

hugepages_free() {
	awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo
}

hugetlbfs_mounted() {
	awk '$3 == "hugetlbfs" { found = 1 } END { exit !found }' /proc/mounts
}

# Reserve then mount; each step may be refused (no CAP_SYS_ADMIN, read-only
# /proc/sys in a container, no memory): report and carry on.
setup_hugepages() {
	local total
	total=$(awk '/^HugePages_Total:/ { print $2 }' /proc/meminfo)
	if [[ ${total:-0} -lt $HUGEPAGES_2M ]]; then
		# --reserve, not --setup: --setup also clears and unmounts, which
		# would pull pages from under a DPDK process already running.
		if command -v dpdk-hugepages.py >/dev/null 2>&1; then
			dpdk-hugepages.py -p 2M --reserve "$((HUGEPAGES_2M * 2))M" >/dev/null 2>&1 || true
		fi
		total=$(awk '/^HugePages_Total:/ { print $2 }' /proc/meminfo)
		if [[ ${total:-0} -lt $HUGEPAGES_2M ]]; then
			{ echo "$HUGEPAGES_2M" > /proc/sys/vm/nr_hugepages; } 2>/dev/null || true
		fi
	fi
	if ! hugetlbfs_mounted; then
		mkdir -p "$HUGE_MNT" 2>/dev/null || true
		mount -t hugetlbfs -o pagesize=2M nodev "$HUGE_MNT" 2>/dev/null || true
	fi
}

install_packages
setup_hugepages

free=$(hugepages_free)
if [[ ${free:-0} -gt 0 ]] && hugetlbfs_mounted; then
	huge="${free:-0} free 2 MB hugepages on a mounted hugetlbfs"
else
	huge="none usable (free: ${free:-0}, hugetlbfs mounted: $(hugetlbfs_mounted && echo yes || echo no));"
	huge+=" the kernel refused them, binaries fall back to --no-huge"
fi
note "summary:"
note "  dpdk      $(pkg-config --modversion libdpdk 2>/dev/null || echo missing)"
note "  meson     $(meson --version 2>/dev/null || echo missing), ninja $(ninja --version 2>/dev/null || echo missing)"
note "  clang     $(clang --version 2>/dev/null | head -n1 || echo missing)"
note "  hugepages $huge"
