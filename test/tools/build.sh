#!/usr/bin/env bash
# Builds the test control plane binaries (etcd, kube-apiserver,
# kube-controller-manager, kubectl) from the pinned modules of test/tools
# into the folder given as $1 (default: bin/ of the repository).
#
# Builds only what is missing, or everything when the pins changed: the hash
# of the go.mod/go.sum/main.go files is kept in <bin>/.tools-hash.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../bin}
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)

k8s_version=$(awk '($1 == "k8s.io/kubernetes" || $2 == "k8s.io/kubernetes") && /v[0-9]/ {print $NF; exit}' "$here/go.mod")
etcd_version=$(awk '($1 == "go.etcd.io/etcd/server/v3" || $2 == "go.etcd.io/etcd/server/v3") && /v[0-9]/ {print $NF; exit}' "$here/etcd/go.mod")
hash=$(cd "$here" && cat go.mod go.sum etcd/go.mod etcd/go.sum build.sh ./*/main.go | sha256sum | cut -c1-16)

missing=()
for tool in etcd kube-apiserver kube-controller-manager kubectl; do
  [ -x "$bin/$tool" ] || missing+=("$tool")
done
if [ "$(cat "$bin/.tools-hash" 2>/dev/null)" != "$hash" ]; then
  missing=(etcd kube-apiserver kube-controller-manager kubectl)
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "tools: up to date in $bin (kubernetes $k8s_version, etcd $etcd_version)"
  exit 0
fi

echo "tools: building ${missing[*]} (kubernetes $k8s_version, etcd $etcd_version); the first build takes about 15 minutes on 2 cores"
minor=${k8s_version#v1.}; minor=${minor%%.*}
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
k8s_tools=()
for tool in "${missing[@]}"; do
  if [ "$tool" = etcd ]; then
    start=$SECONDS
    (cd "$here/etcd" && go build -trimpath -ldflags "-s -w" -o "$bin/etcd" .)
    echo "tools: etcd built in $((SECONDS - start))s"
  else
    k8s_tools+=("./$tool")
  fi
done
if [ ${#k8s_tools[@]} -gt 0 ]; then
  start=$SECONDS
  (cd "$here" && go build -trimpath -ldflags "$k8s_ldflags" -o "$bin/" "${k8s_tools[@]}")
  echo "tools: ${k8s_tools[*]} built in $((SECONDS - start))s"
fi
echo "$hash" > "$bin/.tools-hash"
