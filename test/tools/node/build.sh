#!/usr/bin/env bash
# Builds the node tier's binaries into the folder given as $1 (default: bin/
# of the repository): kubelet and kube-proxy from the pinned Kubernetes 1.35
# of ./worker (its own module), kube-scheduler from the control plane's
# pinned release (module test/tools).
#
# Builds only what is missing, or everything when the pins changed: the hash
# of the go.mod/go.sum/main.go files is kept in <bin>/.node-tools-hash.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools=$(cd "$here/.." && pwd)
bin=${1:-$here/../../../bin}
mkdir -p "$bin"
bin=$(cd "$bin" && pwd)

pin() { awk '($1 == "k8s.io/kubernetes" || $2 == "k8s.io/kubernetes") && /v[0-9]/ {print $NF; exit}' "$1"; }
worker_version=$(pin "$here/worker/go.mod")
cp_version=$(pin "$tools/go.mod")
hash=$(cd "$here" && cat build.sh worker/go.mod worker/go.sum worker/*/main.go kube-scheduler/main.go "$tools/go.mod" "$tools/go.sum" | sha256sum | cut -c1-16)

all=(kubelet kube-proxy kube-scheduler)
missing=()
for tool in "${all[@]}"; do
  [ -x "$bin/$tool" ] || missing+=("$tool")
done
if [ "$(cat "$bin/.node-tools-hash" 2>/dev/null)" != "$hash" ]; then
  missing=("${all[@]}")
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "node tools: up to date in $bin (kubelet, kube-proxy $worker_version; kube-scheduler $cp_version)"
  exit 0
fi

ldflags() {
  local minor=${1#v1.}; minor=${minor%%.*}
  echo "-s -w -X k8s.io/component-base/version.gitVersion=$1 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
}
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
echo "node tools: building ${missing[*]}; the first build takes about 5 minutes on 2 cores"
worker=()
for tool in "${missing[@]}"; do
  case $tool in
  kube-scheduler)
    start=$SECONDS
    # The control plane's flags (../build.sh), so that its compiled
    # packages are reused.
    (cd "$tools" && go build -trimpath -ldflags "$(ldflags "$cp_version")" -o "$bin/kube-scheduler" ./node/kube-scheduler)
    echo "node tools: kube-scheduler $cp_version built in $((SECONDS - start))s"
    ;;
  *) worker+=("./$tool") ;;
  esac
done
if [ ${#worker[@]} -gt 0 ]; then
  start=$SECONDS
  (cd "$here/worker" && CGO_ENABLED=0 go build -trimpath -ldflags "$(ldflags "$worker_version")" -o "$bin/" "${worker[@]}")
  echo "node tools: ${worker[*]} $worker_version built in $((SECONDS - start))s"
fi
echo "$hash" > "$bin/.node-tools-hash"
