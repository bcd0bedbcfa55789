# The operator's build, test and run commands. `make help` lists them.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

BIN        ?= $(CURDIR)/bin
# The version of the release under way (VERSION; CHANGELOG.md records the
# released ones): in --version, the image tag and the chart's appVersion.
VERSION    ?= $(shell cat $(CURDIR)/VERSION)
LDFLAGS    := -s -w -X github.com/hexagonal-operator/operator/internal/version.Version=$(VERSION)
# One build command for `make build` and the Dockerfile.
GO_BUILD   := CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)"
IMG        ?= hexagonal-operator:$(VERSION)
TEST_FLAGS ?= -race -timeout 40m
# docker, or podman: the image targets run $(CONTAINER_TOOL) build/push.
CONTAINER_TOOL ?= docker
# The platforms `make docker-buildx` builds the image for.
PLATFORMS  ?= linux/arm64,linux/amd64,linux/s390x,linux/ppc64le
GOFILES     = $(shell git ls-files --cached --others --exclude-standard '*.go' | grep -v '^test/tools/')

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*##/ {printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build the operator binary into bin/operator (static, version-stamped).
	$(GO_BUILD) -o $(BIN)/operator ./cmd/operator

.PHONY: tools
tools: ## Build etcd, kube-apiserver, kube-controller-manager, kubectl and helm into bin/, and unpack promtool and prometheus from Debian's package (first time about 15 min on 2 cores, and 3 more for helm).
	@./test/tools/build.sh $(BIN)
	@./hack/promtool.sh $(BIN)
	@v=$$(awk '$$1 == "helm.sh/helm/v4" {print $$2}' hack/tools/go.mod); [ "$$($(BIN)/helm version --template '{{.Version}}' 2>/dev/null)" = "$$v" ] || { echo "tools: building helm $$v (hack/tools/go.mod)"; go build -modfile=$(CURDIR)/hack/tools/go.mod -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$$v" -o $(BIN)/helm helm.sh/helm/v4/cmd/helm; }

.PHONY: test
# test/reliability runs last, alone: its flood tests hold Pod admission to
# a latency bound, which other packages' control planes beside it would
# measure instead.
test: tools ## Run every test tier (unit, contract, integration, end to end, reliability) with the race detector.
	go test $(TEST_FLAGS) $$(go list ./... | grep -v '/test/reliability$$')
	cd bench/crbaseline && KUBEBUILDER_ASSETS=$(BIN) go test $(TEST_FLAGS) ./...
	go test $(TEST_FLAGS) ./test/reliability/

.PHONY: test-e2e
test-e2e: tools ## Run only the end-to-end tier (test/e2e: the operator binary and config/ against a real control plane), with the race detector.
	go test $(TEST_FLAGS) ./test/e2e/...

.PHONY: test-node
test-node: tools build ## Run the node tier (test/node: a real kubelet, containerd and the operator's image, deployed with make deploy); needs root, installs its Debian packages (hack/node-setup.sh); prints its figures.
	./hack/node-setup.sh
	./test/tools/node/build.sh $(BIN)
	@mkdir -p .run; echo "test-node: full output (component logs on failure) in .run/test-node.log"
	set -o pipefail; OPERATOR_NODE_TEST=1 go test -count=1 -v -timeout 30m ./test/node/ 2>&1 | tee .run/test-node.log | grep -E 'figure:|node:|node tier:|^(--- |ok|FAIL|panic)|_test.go:'

.PHONY: test-reliability
test-reliability: tools ## Run only the fault tests (test/reliability: failover, API server loss, watch expiry, shutdown under load), verbose with their figures.
	set -o pipefail; go test $(TEST_FLAGS) -count=1 -v ./test/reliability/ 2>&1 | grep -E 'figure:|^(--- |ok|FAIL|panic)'

# golangci-lint, pinned in its own module (hack/tools/go.mod) so that its
# dependencies never enter the operator's go.mod; `go tool` builds it on
# first use and caches the binary. .golangci.yml says which linters and why.
GOLANGCI_LINT = go tool -modfile=$(CURDIR)/hack/tools/go.mod golangci-lint

.PHONY: lint
lint: ## gofmt, go vet and golangci-lint (bench/crbaseline's module too), and the architecture test (the hexagon's dependency rule).
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	go vet ./...
	cd bench/crbaseline && go vet ./...
	$(GOLANGCI_LINT) run ./...
	cd bench/crbaseline && $(GOLANGCI_LINT) run ./...
	go test -count=1 ./test/architecture

.PHONY: lint-fix
lint-fix: ## golangci-lint with --fix: apply the fixes the linters offer (here and in bench/crbaseline), then report what is left.
	$(GOLANGCI_LINT) run --fix ./...
	cd bench/crbaseline && $(GOLANGCI_LINT) run --fix ./...

.PHONY: vet
vet: ## go vet the module and bench/crbaseline.
	go vet ./...
	cd bench/crbaseline && go vet ./...

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -w $(GOFILES)

.PHONY: run
run: tools build ## Start a local control plane and the operator against it (Ctrl-C stops both).
	go run ./test/localcluster --bin $(BIN) --state $(CURDIR)/.run

BENCH_FLAGS ?=

.PHONY: bench
bench: tools build ## Run the benchmark driver (bench/) against its own control plane; BENCH_FLAGS="--runs=3 --ab=other/operator".
	OPERATOR_TEST_ASSETS=$${OPERATOR_TEST_ASSETS:-$(BIN)} go run ./bench --operator=$(BIN)/operator $(BENCH_FLAGS)

.PHONY: crbaseline
crbaseline: ## Build the controller-runtime baseline (bench/crbaseline, a separate module) into bin/crbaseline, and bin/crbaseline-tuned, bin/crbaseline-expert and bin/crbaseline-expert-fifo (the same with --tuned, --expert, --expert --priority-queue=false).
	cd bench/crbaseline && $(GO_BUILD) -o $(BIN)/crbaseline .
	@printf '#!/bin/sh\nexec "$$(dirname "$$0")/crbaseline" --tuned "$$@"\n' > $(BIN)/crbaseline-tuned && chmod +x $(BIN)/crbaseline-tuned
	@printf '#!/bin/sh\nexec "$$(dirname "$$0")/crbaseline" --expert "$$@"\n' > $(BIN)/crbaseline-expert && chmod +x $(BIN)/crbaseline-expert
	@printf '#!/bin/sh\nexec "$$(dirname "$$0")/crbaseline" --expert --priority-queue=false "$$@"\n' > $(BIN)/crbaseline-expert-fifo && chmod +x $(BIN)/crbaseline-expert-fifo

.PHONY: bench-ab
bench-ab: tools build crbaseline ## Side by side: the operator (A) against the controller-runtime baseline as an expert configures it (B), the same on a FIFO queue (C), tuned (D) and at its defaults (E), alternating runs.
	OPERATOR_TEST_ASSETS=$${OPERATOR_TEST_ASSETS:-$(BIN)} go run ./bench --operator=$(BIN)/operator --ab=$(BIN)/crbaseline-expert,$(BIN)/crbaseline-expert-fifo,$(BIN)/crbaseline-tuned,$(BIN)/crbaseline $(BENCH_FLAGS)

.PHONY: bench-ab-tuned
bench-ab-tuned: tools build crbaseline ## The operator (A) against the tuned baseline (B) alone.
	OPERATOR_TEST_ASSETS=$${OPERATOR_TEST_ASSETS:-$(BIN)} go run ./bench --operator=$(BIN)/operator --ab=$(BIN)/crbaseline-tuned $(BENCH_FLAGS)

.PHONY: bench-ab-expert
bench-ab-expert: tools build crbaseline ## The operator (A) against the expert baseline (B) alone: the comparison the performance goals are stated against.
	OPERATOR_TEST_ASSETS=$${OPERATOR_TEST_ASSETS:-$(BIN)} go run ./bench --operator=$(BIN)/operator --ab=$(BIN)/crbaseline-expert $(BENCH_FLAGS)

# kubectl on the PATH, else the one `make tools` builds. The cluster is
# $KUBECONFIG's, else ~/.kube/config's.
KUBECTL ?= $(or $(shell command -v kubectl 2>/dev/null),$(BIN)/kubectl)
DIST    ?= $(CURDIR)/dist
# with-image renders config/default (or the folder of config/ given second)
# with the image $(IMG) through a throwaway overlay, then runs the command
# given.
with-image = tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; ./hack/image-overlay.sh "$(IMG)" "$$tmp" $(2) && $(1)

.PHONY: install
install: ## Install the ChaosPod CRD into the cluster, as config/default renders it.
	$(KUBECTL) apply -k config/default -l app.kubernetes.io/component=crd

.PHONY: uninstall
uninstall: ## Remove the ChaosPod CRD (and every ChaosPod) from the cluster.
	$(KUBECTL) delete -k config/default -l app.kubernetes.io/component=crd --ignore-not-found

.PHONY: deploy
deploy: ## Deploy the operator (config/default) with the image $(IMG): kubectl apply -k config/default with that image.
	@$(call with-image,$(KUBECTL) apply -k "$$tmp")

.PHONY: undeploy
undeploy: ## Remove everything config/default deploys, the CRD and the namespace included.
	$(KUBECTL) delete -k config/default --ignore-not-found

.PHONY: deploy-certmanager
deploy-certmanager: ## Deploy the operator with certificates from cert-manager (config/certmanager; cert-manager must be installed) with the image $(IMG).
	@$(call with-image,$(KUBECTL) apply -k "$$tmp",certmanager)

.PHONY: undeploy-certmanager
undeploy-certmanager: ## Remove everything config/certmanager deploys, its Issuer and Certificates included.
	$(KUBECTL) delete -k config/certmanager --ignore-not-found

.PHONY: build-installer
build-installer: ## Write $(DIST)/install.yaml, config/default with the image $(IMG) in one file (kubectl apply -f).
	@mkdir -p $(DIST)
	@$(call with-image,$(KUBECTL) kustomize "$$tmp" > $(DIST)/install.yaml)
	@echo "wrote $(DIST)/install.yaml (image $(IMG))"

# The flags and environment config/manager runs the operator with, in
# kustomize's base names: what `operator manifests` renders config/ for.
# internal/app's TestConfigIsWhatTheWiringNeeds reads them from
# config/manager and fails when config/ differs from the rendering.
MANIFESTS_ENV  := POD_NAMESPACE=system OPERATOR_WEBHOOK_SERVICE_NAME=webhook-service \
	OPERATOR_MUTATING_WEBHOOK_CONFIGURATION_NAME=mutating-webhook-configuration \
	OPERATOR_VALIDATING_WEBHOOK_CONFIGURATION_NAME=validating-webhook-configuration \
	OPERATOR_LEADER_ELECTION_ID=hexagonal-operator-leader OPERATOR_WEBHOOK_CERT_SECRET=hexagonal-operator-webhook-cert
MANIFESTS_ARGS := --leader-elect --webhook-cert-mode=self

.PHONY: release
release: ## Write $(DIST)/install.yaml (config/default with the image $(IMG)) and $(DIST)/hexagonal-operator-$(VERSION).tgz (dist/chart, packaged at $(VERSION)) for the release VERSION names.
	@$(MAKE) --no-print-directory build-installer
	@test -x $(BIN)/helm || { echo "bin/helm is missing: run make tools"; exit 1; }
	$(BIN)/helm package dist/chart --version $(VERSION) --app-version $(VERSION) --destination $(DIST)

.PHONY: manifests
manifests: generate ## Regenerate the CRDs, then config/rbac's roles, config/webhook and the CRD conversion patch from the operator's wiring (`operator manifests`), and the example's.
	$(MANIFESTS_ENV) go run ./cmd/operator manifests --output-dir=config $(MANIFESTS_ARGS)
	$(MANIFESTS_ENV) go run ./examples/configmap manifests --output-dir=examples/configmap/config --controllers=
	$(MANIFESTS_ENV) go run ./examples/greeting manifests --output-dir=examples/greeting/config --controllers=
	$(MANIFESTS_ENV) go run ./examples/mirror manifests --output-dir=examples/mirror/config --controllers=

.PHONY: docker-build
docker-build: ## Build the container image $(IMG) with $(CONTAINER_TOOL) (docker or podman).
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the container image $(IMG) with $(CONTAINER_TOOL).
	$(CONTAINER_TOOL) push $(IMG)

# The Dockerfile's build stage runs on the builder's own platform
# (--platform=$$BUILDPLATFORM, written into a copy) and cross-compiles for
# each target (TARGETOS/TARGETARCH), so no stage runs under emulation.
.PHONY: docker-buildx
docker-buildx: ## Build the image $(IMG) for $(PLATFORMS) and push it (docker buildx, or podman with --manifest).
	@sed -e '0,/^FROM/ s/^FROM /FROM --platform=$${BUILDPLATFORM} /' Dockerfile > Dockerfile.cross
	@trap 'rm -f Dockerfile.cross' EXIT; \
	case "$$($(CONTAINER_TOOL) --version)" in \
	podman*) \
		$(CONTAINER_TOOL) build --platform=$(PLATFORMS) --build-arg VERSION=$(VERSION) --manifest $(IMG) -f Dockerfile.cross . && \
		$(CONTAINER_TOOL) manifest push $(IMG) ;; \
	*) \
		$(CONTAINER_TOOL) buildx create --name hexagonal-operator-builder >/dev/null 2>&1; \
		$(CONTAINER_TOOL) buildx build --builder hexagonal-operator-builder --push --platform=$(PLATFORMS) --build-arg VERSION=$(VERSION) --tag $(IMG) -f Dockerfile.cross .; \
		status=$$?; $(CONTAINER_TOOL) buildx rm hexagonal-operator-builder >/dev/null 2>&1; exit $$status ;; \
	esac

.PHONY: clean
clean: ## Remove the operator binary and local run state (keeps the control plane binaries).
	rm -rf $(BIN)/operator $(CURDIR)/.run

CONTROLLER_GEN := go tool controller-gen
CRD_BASES      := config/crd/bases
# The embedded PodTemplateSpec's field descriptions, dropped so that the CRD
# fits kubectl's client-side apply (hack/crdtrim says why).
CRD_TRIM       := go run ./hack/crdtrim -embedded spec.template,spec.podTemplate
# The API and CRD of the custom-resource example (docs/extending.md).
GREETING_API   := ./examples/greeting/api/...
GREETING_CRD   := examples/greeting/config/crd

.PHONY: generate
generate: ## Regenerate deepcopy (api/..., examples/greeting/api/...) and the CRDs (config/crd/bases and the chart's copy, examples/greeting/config/crd) with controller-gen.
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/... output:crd:artifacts:config=$(CRD_BASES)
	$(CRD_TRIM) $(CRD_BASES)/*.yaml
	cp $(CRD_BASES)/*.yaml dist/chart/files/crd/
	$(CONTROLLER_GEN) object paths=$(GREETING_API)
	$(CONTROLLER_GEN) crd paths=$(GREETING_API) output:crd:artifacts:config=$(GREETING_CRD)

.PHONY: verify
verify: ## Fail when generated files are stale (regenerates into a temp copy and diffs).
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	mkdir -p "$$tmp/crd" "$$tmp/greeting-crd" "$$tmp/api"; \
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/... output:crd:artifacts:config="$$tmp/crd" || exit 1; \
	$(CRD_TRIM) "$$tmp"/crd/*.yaml || exit 1; \
	diff -ru $(CRD_BASES) "$$tmp/crd" || { echo "config/crd/bases is stale: run make generate"; exit 1; }; \
	$(CONTROLLER_GEN) crd paths=$(GREETING_API) output:crd:artifacts:config="$$tmp/greeting-crd" || exit 1; \
	diff -ru --exclude=patches $(GREETING_CRD) "$$tmp/greeting-crd" || { echo "$(GREETING_CRD) is stale: run make generate"; exit 1; }; \
	for d in $$(find api examples -name zz_generated.deepcopy.go -exec dirname {} \;); do \
		mkdir -p "$$tmp/api/$$d"; cp "$$d/zz_generated.deepcopy.go" "$$tmp/api/$$d/"; done; \
	$(CONTROLLER_GEN) object paths=./api/... || exit 1; \
	$(CONTROLLER_GEN) object paths=$(GREETING_API) || exit 1; \
	stale=0; for f in $$(find api examples -name zz_generated.deepcopy.go); do \
		if ! diff -u "$$tmp/api/$$f" "$$f"; then stale=1; cp "$$tmp/api/$$f" "$$f"; fi; done; \
	if [ $$stale = 1 ]; then echo "deepcopy is stale: run make generate"; exit 1; fi

.PHONY: test-alerts
test-alerts: ## Check the alert rules and run their unit tests with promtool (Debian's, unpacked into bin/), and the dashboard's queries against the exported metrics.
	@./hack/promtool.sh $(BIN)
	go test -count=1 -run 'Promtool|Dashboard' ./test/docs/
