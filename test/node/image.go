package node

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// File is one entry of an image layer: a regular file, or a folder when
// Dir is set.
type File struct {
	Path     string // relative to the root, no leading slash
	Mode     int64  // permission bits
	Dir      bool
	Data     []byte
	UID, GID int
}

// ImageConfig is the part of an OCI image configuration that says how the
// container runs.
type ImageConfig struct {
	User       string   `json:"User,omitempty"`
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	Env        []string `json:"Env,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
}

// Image is an OCI image to build: its full reference (as containerd
// normalizes it, e.g. docker.io/library/name:tag), its layers from the
// bottom up, and its configuration.
type Image struct {
	Ref    string
	Layers [][]File
	Config ImageConfig
}

// The layers' timestamps: fixed, so the same inputs give the same digests.
var epoch = time.Unix(0, 0).UTC()

const (
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// WriteOCIArchive writes img as an OCI image layout in one tar stream, the
// form `ctr images import` takes. The reference goes into the index's
// io.containerd.image.name annotation, which names the imported image.
func WriteOCIArchive(w io.Writer, img Image) error {
	blobs := map[string][]byte{}
	put := func(data []byte) string {
		sum := sha256.Sum256(data)
		d := "sha256:" + hex.EncodeToString(sum[:])
		blobs[d] = data
		return d
	}
	var layers []descriptor
	var diffIDs []string
	for i, files := range img.Layers {
		raw, err := layerTar(files)
		if err != nil {
			return fmt.Errorf("layer %d of %s: %w", i, img.Ref, err)
		}
		sum := sha256.Sum256(raw)
		diffIDs = append(diffIDs, "sha256:"+hex.EncodeToString(sum[:]))
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
		if _, err := zw.Write(raw); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		layers = append(layers, descriptor{MediaType: mediaLayer, Digest: put(gz.Bytes()), Size: int64(gz.Len())})
	}
	config, err := json.Marshal(map[string]any{
		"created":      epoch.Format(time.RFC3339),
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config":       img.Config,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": diffIDs},
	})
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        descriptor{MediaType: mediaConfig, Digest: put(config), Size: int64(len(config))},
		"layers":        layers,
	})
	if err != nil {
		return err
	}
	tag := img.Ref[strings.LastIndex(img.Ref, ":")+1:]
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaIndex,
		"manifests": []descriptor{{
			MediaType: mediaManifest, Digest: put(manifest), Size: int64(len(manifest)),
			Annotations: map[string]string{
				"io.containerd.image.name":          img.Ref,
				"org.opencontainers.image.ref.name": tag,
			},
		}},
	})
	if err != nil {
		return err
	}

	tw := tar.NewWriter(w)
	entries := []File{
		{Path: "oci-layout", Mode: 0o644, Data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{Path: "index.json", Mode: 0o644, Data: index},
		{Path: "blobs", Mode: 0o755, Dir: true},
		{Path: "blobs/sha256", Mode: 0o755, Dir: true},
	}
	digests := make([]string, 0, len(blobs))
	for d := range blobs {
		digests = append(digests, d)
	}
	sort.Strings(digests)
	for _, d := range digests {
		entries = append(entries, File{Path: "blobs/sha256/" + strings.TrimPrefix(d, "sha256:"), Mode: 0o644, Data: blobs[d]})
	}
	for _, f := range entries {
		if err := writeEntry(tw, f); err != nil {
			return err
		}
	}
	return tw.Close()
}

// layerTar is one layer's uncompressed tar, entries in the given order.
func layerTar(files []File) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := writeEntry(tw, f); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeEntry(tw *tar.Writer, f File) error {
	h := &tar.Header{
		Name: f.Path, Mode: f.Mode, Uid: f.UID, Gid: f.GID,
		ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.Data)),
	}
	if f.Dir {
		h.Name, h.Typeflag, h.Size = strings.TrimSuffix(f.Path, "/")+"/", tar.TypeDir, 0
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tar %s: %w", f.Path, err)
	}
	if _, err := tw.Write(f.Data); err != nil {
		return fmt.Errorf("tar %s: %w", f.Path, err)
	}
	return nil
}

// NonrootUID is the user the base layer provides and the operator's
// Deployment runs as (distroless's "nonroot").
const NonrootUID = 65532

// StaticBaseLayer is what gcr.io/distroless/static:nonroot holds, made from
// this machine's files: root, nobody and nonroot (65532) users and groups,
// nsswitch.conf, the CA bundle, the time zone database, /tmp and
// /home/nonroot. No shell, no package manager. caBundle and zoneinfo are
// host paths (Debian: /etc/ssl/certs/ca-certificates.crt and
// /usr/share/zoneinfo); an empty zoneinfo leaves the zone database out.
func StaticBaseLayer(caBundle, zoneinfo string) ([]File, error) {
	ca, err := os.ReadFile(caBundle)
	if err != nil {
		return nil, fmt.Errorf("CA bundle for the base layer: %w", err)
	}
	files := []File{
		{Path: "etc", Mode: 0o755, Dir: true},
		{Path: "etc/passwd", Mode: 0o644, Data: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\n" +
				"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
				"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{Path: "etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n")},
		{Path: "etc/nsswitch.conf", Mode: 0o644, Data: []byte("passwd: files\ngroup: files\nhosts: files dns\n")},
		{Path: "etc/ssl", Mode: 0o755, Dir: true},
		{Path: "etc/ssl/certs", Mode: 0o755, Dir: true},
		{Path: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: ca},
		{Path: "home", Mode: 0o755, Dir: true},
		{Path: "home/nonroot", Mode: 0o700, Dir: true, UID: NonrootUID, GID: NonrootUID},
		{Path: "root", Mode: 0o700, Dir: true},
		{Path: "tmp", Mode: 0o1777, Dir: true},
	}
	if zoneinfo == "" {
		return files, nil
	}
	files = append(files, File{Path: "usr", Mode: 0o755, Dir: true}, File{Path: "usr/share", Mode: 0o755, Dir: true})
	err = filepath.WalkDir(zoneinfo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(zoneinfo, p)
		dst := filepath.ToSlash(filepath.Join("usr/share/zoneinfo", rel))
		if d.IsDir() {
			files = append(files, File{Path: dst, Mode: 0o755, Dir: true})
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // Debian's links (posixrules, localtime) are not needed
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, File{Path: dst, Mode: 0o644, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("time zone database for the base layer: %w", err)
	}
	return files, nil
}

// BinaryLayer is one executable at /name.
func BinaryLayer(path, name string) ([]File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return []File{{Path: name, Mode: 0o755, Data: data}}, nil
}

// OperatorRef is the operator's image as the node tier deploys it:
// `make deploy IMG=hexagonal-operator:node`, which containerd names so.
const (
	OperatorIMG = "hexagonal-operator:node"
	OperatorRef = "docker.io/library/" + OperatorIMG
)

// OperatorImage is the operator's image the way the Dockerfile assembles
// it — the static binary of `make build` at /operator on distroless
// static:nonroot, run as 65532 — with the base layer made from this
// machine's files instead of pulled.
func OperatorImage(binary string) (Image, error) {
	base, err := StaticBaseLayer("/etc/ssl/certs/ca-certificates.crt", "/usr/share/zoneinfo")
	if err != nil {
		return Image{}, err
	}
	op, err := BinaryLayer(binary, "operator")
	if err != nil {
		return Image{}, fmt.Errorf("operator binary (make build): %w", err)
	}
	return Image{
		Ref:    OperatorRef,
		Layers: [][]File{base, op},
		Config: ImageConfig{
			User:       fmt.Sprintf("%d:%d", NonrootUID, NonrootUID),
			Entrypoint: []string{"/operator"},
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
			WorkingDir: "/",
		},
	}, nil
}
