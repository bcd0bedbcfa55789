#!/usr/bin/env bash
# Removes what a killed `make test-node` run left on this machine: the
# shims and containers of its containerd, their mounts and network
# namespaces, the bridge hxonode0, the KUBE-* iptables chains, the kubelet's
# kubepods cgroups, the sysctls it changed and its node-* folders under
# $TMPDIR (else /tmp). A run that ends normally removes all of this itself
# and fails when it cannot; use this only when no node test is running.
# Needs root.
set -uo pipefail
[ "$(id -u)" = 0 ] || { echo "node-cleanup: run as root" >&2; exit 1; }
# The tests' folders are os.MkdirTemp's: under $TMPDIR, else /tmp.
tmp=${TMPDIR:-/tmp}
tmp=${tmp%/}

# Processes: containerd's shims of the node tier, then every container.
pkill -KILL -f "containerd-shim-runc-v2 .*-address $tmp/node-" 2>/dev/null
for procs in $(find /sys/fs/cgroup/*/kubepods -name cgroup.procs 2>/dev/null); do
  xargs -r kill -KILL <"$procs" 2>/dev/null
done
pkill -KILL -f "$tmp/node-[0-9]+/" 2>/dev/null
sleep 1

# Mounts (network namespaces, overlays, volumes), deepest first.
awk -v p="^$tmp/node-" '$5 ~ p {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do
  umount -l "$m" 2>/dev/null
done

ip link delete hxonode0 2>/dev/null

for tool in iptables ip6tables; do
  command -v "$tool-save" >/dev/null || continue
  for table in filter nat mangle; do
    chains=$("$tool-save" -t "$table" 2>/dev/null | awk -F'[: ]' '/^:KUBE-/ {print $2}')
    [ -n "$chains" ] || continue
    "$tool-save" -t "$table" | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j KUBE-' | while read -r rule; do
      eval "$tool -t $table -D ${rule#-A }"
    done
    for c in $chains; do "$tool" -t "$table" -F "$c"; done
    for c in $chains; do "$tool" -t "$table" -X "$c" 2>/dev/null; done
  done
done

for root in /sys/fs/cgroup/*/kubepods; do
  [ -d "$root" ] && find "$root" -depth -type d -exec rmdir {} \; 2>/dev/null
done

# The sysctls the kubelet, kube-proxy and the bridge plugin set, back to
# what the run read before it started.
for saved in "$tmp"/node-[0-9]*/sysctl.before; do
  [ -f "$saved" ] || continue
  while read -r key value; do
    printf '%s' "$value" >"/proc/sys/$key" 2>/dev/null
  done <"$saved"
done

# The control plane's folder of the run (its processes died with it).
for saved in "$tmp"/node-[0-9]*/controlplane-dir; do
  [ -f "$saved" ] && rm -rf "$(cat "$saved")"
done
rm -rf "$tmp"/node-[0-9]*
echo "node-cleanup: done; left: $(ip -br link show hxonode0 2>/dev/null | wc -l) bridge, $(awk -v p="^$tmp/node-" '$5 ~ p' /proc/self/mountinfo | wc -l) mounts, $(iptables-save 2>/dev/null | grep -c '^:KUBE-') chains, $(ls -d /sys/fs/cgroup/*/kubepods 2>/dev/null | wc -l) cgroup roots"
