#!/usr/bin/env bash
# Installs what the node tier (make test-node) needs from the machine's
# Debian packages: containerd and runc (the container runtime the kubelet
# drives), the CNI plugins (bridge, host-local, loopback, portmap) and
# iproute2, iptables and util-linux for network namespaces and mounts.
# Idempotent: installs only what is missing. Needs root.
set -euo pipefail
packages=(containerd runc containernetworking-plugins iproute2 iptables util-linux conntrack)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "node-setup: ${missing[*]} missing and not root; run as root" >&2
    exit 1
  fi
  echo "node-setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Bridged Pod traffic must cross iptables for Services (kube-proxy's DNAT
# of replies between Pods on the same bridge).
if [ ! -e /proc/sys/net/bridge/bridge-nf-call-iptables ]; then
  modprobe br_netfilter 2>/dev/null || { echo "node-setup: the kernel lacks br_netfilter" >&2; exit 1; }
fi
# The Debian package enables a system containerd; the node tier starts its
# own, with its own root and socket, so the system one is not needed.
echo "node-setup: containerd $(containerd --version | awk '{print $3}'), runc $(runc --version | awk 'NR==1{print $3}'), CNI plugins in /usr/lib/cni"
