#!/usr/bin/env bash
# Build userstack and run the HTTP echo server in a network namespace, with
# the Linux kernel on the other side of its TAP interface:
#
#   sudo tools/run-echo.sh                 # then, in another terminal:
#   sudo ip netns exec userstack curl http://10.77.0.2:8080/
#
# Steps: tools/setup.sh (packages, hugepages), meson setup + ninja, namespace
# NAME, us-httpecho inside it, the kernel side (10.77.0.1/24, and
# fd00:77::1/64 when the config has [ip6] enable = on) on the tap.
# Ctrl-C stops the server and deletes the namespace.
set -euo pipefail

usage() {
	cat <<EOF
usage: $0 [--config FILE] [--port N] [--netns NAME] [--builddir DIR] [--no-setup]
  --config FILE   stack config (default config/tap.ini)
  --port N        HTTP port (default 8080)
  --netns NAME    network namespace to create (default userstack)
  --builddir DIR  meson build directory (default build)
  --no-setup      do not run tools/setup.sh
Environment: US_ECHO_SERVER="CMD ..." runs CMD instead of the built us-httpecho
(the harness's stand-in, tests/interop/standin_echo.py, to check this script).
EOF
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
config=config/tap.ini
port=8080
netns=userstack
builddir=build
do_setup=1
kernel_addr=10.77.0.1/24
kernel_addr6=fd00:77::1/64

while [[ $# -gt 0 ]]; do
	case "$1" in
	--config) config=${2:?--config needs a file}; shift 2 ;;
	--port) port=${2:?--port needs a number}; shift 2 ;;
	--netns) netns=${2:?--netns needs a name}; shift 2 ;;
	--builddir) builddir=${2:?--builddir needs a directory}; shift 2 ;;
	--no-setup) do_setup=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "run-echo: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
done
if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
	echo "run-echo: --port $port: not a port number" >&2
	exit 2
fi

cd "$root"
config=$(realpath "$config")
[[ -r $config ]] || { echo "run-echo: cannot read config $config" >&2; exit 1; }
if [[ $(id -u) -ne 0 ]]; then
	echo "run-echo: run as root (network namespaces, TAP devices, hugepages)" >&2
	exit 1
fi

# '#' starts a comment anywhere on a line in our INI files.
ini_get() { # section key
	awk -v s="[$1]" -v k="$2" '
		{ sub(/#.*/, ""); gsub(/^[ \t]+|[ \t]+$/, "") }
		/^\[/ { in_s = ($0 == s); next }
		in_s && index($0, "=") {
			key = substr($0, 1, index($0, "=") - 1); gsub(/[ \t]+$/, "", key)
			if (key == k) { v = substr($0, index($0, "=") + 1); gsub(/^[ \t]+/, "", v); print v; exit }
		}' "$config"
}
iface=$(ini_get port device | sed -n 's/.*iface=\([^,]*\).*/\1/p')
iface=${iface:-ustap0}
stack_addr=$(ini_get ip addr)
stack_addr=${stack_addr%%/*}
stack_addr=${stack_addr:-10.77.0.2}
# IPv6: only when the config turns it on ([ip6] enable, off by default).
ip6=0
case $(ini_get ip6 enable) in on | yes | true | 1) ip6=1 ;; esac
stack_addr6=$(ini_get ip6 addr)
stack_addr6=${stack_addr6%%/*}

if ((do_setup)) && [[ -f tools/setup.sh ]]; then
	bash tools/setup.sh
fi
[[ -f $builddir/build.ninja ]] || meson setup "$builddir"
ninja -C "$builddir" apps/httpecho/us-httpecho
server=$builddir/apps/httpecho/us-httpecho
read -r -a server_cmd <<<"${US_ECHO_SERVER:-$server}"

if ip netns list | awk '{print $1}' | grep -qx -- "$netns"; then
	if [[ -n $(ip netns pids "$netns" 2>/dev/null) ]]; then
		echo "run-echo: namespace $netns exists and has processes in it (another run?)" >&2
		echo "          stop them, or pick another name with --netns" >&2
		exit 1
	fi
	ip netns del "$netns" # left over from a run that was killed
fi

server_pid=
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	trap - INT TERM EXIT
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$server_pid" 2>/dev/null; then
			echo "run-echo: server ignored SIGTERM for 5 s: SIGKILL" >&2
			kill -KILL "$server_pid" 2>/dev/null || true
		fi
		wait "$server_pid" 2>/dev/null || true
	fi
	ip netns del "$netns" 2>/dev/null || true
	echo "run-echo: stopped; namespace $netns deleted"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$netns"
ip -n "$netns" link set lo up
# A background job of a script ignores SIGINT; cleanup stops it with SIGTERM.
ip netns exec "$netns" "${server_cmd[@]}" --config "$config" --port "$port" &
server_pid=$!

# The TAP PMD creates the interface a second or two after start.
for _ in $(seq 150); do
	ip -n "$netns" link show "$iface" >/dev/null 2>&1 && break
	kill -0 "$server_pid" 2>/dev/null || { echo "run-echo: the server exited" >&2; exit 1; }
	sleep 0.1
done
ip -n "$netns" link show "$iface" >/dev/null 2>&1 ||
	{ echo "run-echo: $iface did not appear in namespace $netns" >&2; exit 1; }
ip -n "$netns" addr add "$kernel_addr" dev "$iface"
# nodad: the kernel's address is usable at once (the stack runs its own
# Duplicate Address Detection unless [ip6] dad = off).  A kernel without
# IPv6 costs the IPv6 lines only, never the IPv4 path.
if ((ip6)) && ! ip -n "$netns" -6 addr add "$kernel_addr6" dev "$iface" nodad; then
	echo "run-echo: could not give $iface $kernel_addr6 (IPv6 off in this kernel?):" \
		"IPv4 only" >&2
	ip6=0
fi
ip -n "$netns" link set "$iface" up

cat <<EOF

us-httpecho runs in network namespace '$netns': the stack is $stack_addr,
the kernel side is ${kernel_addr%%/*} on $iface.  Try, from another terminal:

    ip netns exec $netns curl http://$stack_addr:$port/
    ip netns exec $netns ping -c 3 $stack_addr

EOF
# The IPv6 curl line answers once TCP over IPv6 is attached and the echo
# server listens on both families; ping -6 is the IPv6 check that works first.
if ((ip6)) && [[ -n $stack_addr6 ]]; then
	cat <<EOF
IPv6 ([ip6] enable = on): the stack is $stack_addr6, the kernel side ${kernel_addr6%%/*}:

    ip netns exec $netns ping -6 -c 3 $stack_addr6
    ip netns exec $netns curl -g 'http://[$stack_addr6]:$port/'

EOF
elif ((ip6)); then
	echo "IPv6 is on with no [ip6] addr: the stack has its link-local address only."
	echo
fi
cat <<EOF
Ctrl-C stops the server and deletes the namespace.

EOF
set +e
wait "$server_pid"
rc=$?
set -e
server_pid=
echo "run-echo: server exited with status $rc"
exit "$rc"
