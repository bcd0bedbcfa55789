#!/usr/bin/env bash
# Writes into folder $2 a kustomization that renders config/default (or the
# folder of config/ named by $3, such as certmanager) with the operator
# image $1 (name, name:tag or name@sha256:digest), without editing config/:
# what `make deploy` and `make deploy-certmanager` apply and `make
# build-installer` renders.
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: $0 IMAGE FOLDER [BASE]" >&2; exit 2; }
img=$1 dir=$2 base=${3:-default}
[ -n "$img" ] || { echo "$0: empty image (set IMG)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$root/config/$base/kustomization.yaml" ] || { echo "$0: no kustomization in config/$base" >&2; exit 2; }
name=$img tag="" digest=""
case $img in
*@*) name=${img%%@*} digest=${img#*@} ;;
*)
  last=${img##*/}
  if [[ $last == *:* ]]; then
    tag=${last##*:} name=${img%:*}
  fi
  ;;
esac
{
  echo "apiVersion: kustomize.config.k8s.io/v1beta1"
  echo "kind: Kustomization"
  echo "resources:"
  # kustomize takes bases by relative path only.
  echo "- $(realpath --relative-to="$dir" "$root/config/$base")"
  echo "images:"
  echo "- name: hexagonal-operator"
  echo "  newName: $name"
  if [ -n "$tag" ]; then echo "  newTag: \"$tag\""; fi
  if [ -n "$digest" ]; then echo "  digest: $digest"; fi
} >"$dir/kustomization.yaml"
