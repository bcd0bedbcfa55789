package controlplane

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// fieldManager owns what the harness applies.
const fieldManager = "controlplane-harness"

// WebhookServer is where the API server should send admission and conversion
// requests in tests: there is no cluster DNS, so clientConfig.service is
// replaced by https://<Host><path> with CABundle.
type WebhookServer struct {
	// Host is host:port, for example "127.0.0.1:9443".
	Host string
	// CABundle is the PEM CA that verifies the server's certificate.
	CABundle []byte
}

// Manifests reads the objects of a folder: rendered with `kubectl kustomize`
// when it holds a kustomization.yaml, else every .yaml/.yml/.json file in
// name order (multi-document YAML allowed).
func Manifests(dir string) ([]*unstructured.Unstructured, error) {
	if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err == nil {
		kubectl, err := Binary("kubectl")
		if err != nil {
			return nil, err
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(kubectl, "kustomize", dir)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("kubectl kustomize %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
		}
		return decodeAll(&stdout, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, ext) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read manifest: %w", err)
		}
		more, err := decodeAll(bytes.NewReader(data), path)
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	return objs, nil
}

func decodeAll(r io.Reader, source string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("decode %s: %w", source, err)
		}
		if len(m) == 0 {
			continue // an empty document between "---" separators
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("decode %s: an object without apiVersion or kind", source)
		}
		objs = append(objs, u)
	}
}

// Apply server-side applies objects (with force, as their only manager),
// resolving each kind through discovery.
func (cp *ControlPlane) Apply(ctx context.Context, objs ...*unstructured.Unstructured) error {
	return cp.apply(ctx, nil, objs)
}

// DryRunApply is Apply with server-side dry run: the API server validates,
// defaults and admits every object, and persists none. Namespaced objects
// need their namespace to exist.
func (cp *ControlPlane) DryRunApply(ctx context.Context, objs ...*unstructured.Unstructured) error {
	return cp.apply(ctx, []string{metav1.DryRunAll}, objs)
}

func (cp *ControlPlane) apply(ctx context.Context, dryRun []string, objs []*unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			// A CRD applied a moment ago: refresh discovery once.
			mapper.Reset()
			if mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				return fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
			}
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			return fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == "namespace" {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = metav1.NamespaceDefault
			}
			ri = dyn.Resource(mapping.Resource).Namespace(ns)
		}
		if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
			FieldManager: fieldManager, Force: new(true), DryRun: dryRun,
		}); err != nil {
			return fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
	}
	return nil
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs applies the CustomResourceDefinitions found in dir and waits
// until each is Established. When server is non-nil, a conversion webhook's
// clientConfig is pointed at it. It returns the CRD names.
func (cp *ControlPlane) InstallCRDs(ctx context.Context, dir string, server *WebhookServer) ([]string, error) {
	objs, err := Manifests(dir)
	if err != nil {
		return nil, err
	}
	var crds []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if server != nil {
			if cc, ok, _ := unstructured.NestedMap(obj.Object, "spec", "conversion", "webhook", "clientConfig"); ok {
				if err := unstructured.SetNestedMap(obj.Object, rewriteClientConfig(cc, *server), "spec", "conversion", "webhook", "clientConfig"); err != nil {
					return nil, err
				}
			}
		}
		crds = append(crds, obj)
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("install CRDs: no CustomResourceDefinition in %s", dir)
	}
	if err := cp.Apply(ctx, crds...); err != nil {
		return nil, fmt.Errorf("install CRDs: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(crds))
	for _, crd := range crds {
		if err := waitEstablished(ctx, dyn, crd.GetName()); err != nil {
			return nil, err
		}
		names = append(names, crd.GetName())
	}
	return names, nil
}

func waitEstablished(ctx context.Context, dyn dynamic.Interface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		crd, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err == nil && hasCondition(crd, "Established") && hasCondition(crd, "NamesAccepted") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established: %w (last error: %v)", name, ctx.Err(), err) //nolint:errorlint // err is nil when the CRD was read but not yet established; %v prints <nil>, %w garbles it
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func hasCondition(obj *unstructured.Unstructured, condType string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == condType && m["status"] == "True" {
			return true
		}
	}
	return false
}

// InstallWebhooks applies the Mutating- and ValidatingWebhookConfigurations
// found in dir with every clientConfig pointed at server. It returns the
// configurations as applied.
func (cp *ControlPlane) InstallWebhooks(ctx context.Context, dir string, server WebhookServer) ([]*unstructured.Unstructured, error) {
	objs, err := Manifests(dir)
	if err != nil {
		return nil, err
	}
	var configs []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() != "MutatingWebhookConfiguration" && obj.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for i, h := range hooks {
			hook, ok := h.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("install webhooks: %s: webhook %d is not an object", obj.GetName(), i)
			}
			cc, _ := hook["clientConfig"].(map[string]any)
			hook["clientConfig"] = rewriteClientConfig(cc, server)
		}
		if err := unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"); err != nil {
			return nil, err
		}
		configs = append(configs, obj)
	}
	if len(configs) == 0 {
		return nil, fmt.Errorf("install webhooks: no webhook configuration in %s", dir)
	}
	if err := cp.Apply(ctx, configs...); err != nil {
		return nil, fmt.Errorf("install webhooks: %w", err)
	}
	return configs, nil
}

// rewriteClientConfig turns a service reference into a URL on server,
// keeping the path.
func rewriteClientConfig(cc map[string]any, server WebhookServer) map[string]any {
	path := "/"
	if svc, ok := cc["service"].(map[string]any); ok {
		if p, ok := svc["path"].(string); ok && p != "" {
			path = p
		}
	} else if u, ok := cc["url"].(string); ok {
		if i := strings.Index(strings.TrimPrefix(u, "https://"), "/"); i >= 0 {
			path = strings.TrimPrefix(u, "https://")[i:]
		}
	}
	return map[string]any{
		"url":      "https://" + server.Host + path,
		"caBundle": base64.StdEncoding.EncodeToString(server.CABundle),
	}
}
