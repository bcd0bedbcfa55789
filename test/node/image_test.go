package node

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestWriteOCIArchiveIsALayoutNamedForContainerd(t *testing.T) {
	var buf bytes.Buffer
	img := Image{
		Ref:    "registry.k8s.io/pause:3.10",
		Layers: [][]File{{{Path: "pause", Mode: 0o755, Data: []byte("binary")}}},
		Config: ImageConfig{Entrypoint: []string{"/pause"}, User: "65535:65535"},
	}
	if err := WriteOCIArchive(&buf, img); err != nil {
		t.Fatal(err)
	}
	first := append([]byte(nil), buf.Bytes()...)
	files := map[string][]byte{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[h.Name] = data
	}
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Fatalf("oci-layout: %q", files["oci-layout"])
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %s (%v)", files["index.json"], err)
	}
	m := index.Manifests[0]
	if m.Annotations["io.containerd.image.name"] != img.Ref {
		t.Fatalf("index names %v, want %s", m.Annotations, img.Ref)
	}
	if _, ok := files["blobs/sha256/"+strings.TrimPrefix(m.Digest, "sha256:")]; !ok {
		t.Fatalf("manifest blob %s missing", m.Digest)
	}
	var again bytes.Buffer
	if err := WriteOCIArchive(&again, img); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again.Bytes()) {
		t.Fatal("the same image written twice differs: digests would change at every run")
	}
}
