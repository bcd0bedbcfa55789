package reliability_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hexagonal-operator/operator/test/controlplane"
	"github.com/hexagonal-operator/operator/test/operatorproc"
)

// replicaSetAuditPolicy records who listed and watched ReplicaSets, and
// nothing else, so the log stays small.
const replicaSetAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["list", "watch"]
  resources:
  - group: apps
    resources: ["replicasets"]
- level: None
`

// operatorUserAgent starts the User-Agent of the operator's requests.
const operatorUserAgent = "hexagonal-operator/"

// TestWatchExpiryRelistsWithoutLoss makes the operator's watches ask for
// history that etcd no longer has, and checks that the informers relist
// and nothing created around that moment is missed.
//
// How "resource version too old" is forced: the API server runs with
// --watch-cache=false, so every watch it serves is an etcd watch from the
// client's resourceVersion (with the watch cache, it would answer from its
// own window, filled afresh at each start, and compaction would never reach
// the clients). The API server is stopped, which breaks the operator's
// watches; while it is down, one key is written to etcd directly and etcd
// is compacted at that revision, past every resourceVersion the operator
// has seen. When the API server is back, the reflectors re-watch from their
// last resourceVersion, etcd answers "required revision has been
// compacted", the API server turns that into 410 Expired ("too old resource
// version"), and each reflector must list again. --etcd-compaction-interval=0
// keeps the API server's own compactor out of the way.
func TestWatchExpiryRelistsWithoutLoss(t *testing.T) {
	t.Parallel()
	const ns = "compaction"
	cp := controlplane.StartT(t, controlplane.Options{
		StopGrace:      time.Second,
		APIServerFlags: []string{"--watch-cache=false", "--etcd-compaction-interval=0"},
		AuditPolicy:    replicaSetAuditPolicy,
	})
	etcd := etcdClientURL(t, cp)
	ctx := t.Context()
	require.NoError(t, cp.EnsureNamespace(ctx, ns))
	cs := cp.Clientset()
	operatorproc.RunAgainst(t, operatorBin, cp, "--controllers=replicaset")

	createReplicaSets(t, cs, ns, "before", 100, 8)
	waitAllLabeled(t, cs, ns, 100, 60*time.Second)
	// Not waited for: the operator may see them only after its relist.
	createReplicaSets(t, cs, ns, "around", 30, 8)

	require.NoError(t, cp.StopComponent("kube-apiserver"))
	down := time.Now()
	// A watch from resourceVersion v asks for the events from v+1 on, and
	// compacting at rev keeps rev itself: two writes put rev past v+1 even
	// when the operator had seen the latest revision.
	etcdPut(t, etcd, "/reliability/compaction-marker", "one")
	rev := etcdPut(t, etcd, "/reliability/compaction-marker", "two")
	etcdCompact(t, etcd, rev)
	require.NoError(t, cp.RestartComponent(ctx, "kube-apiserver"))
	up := time.Now()

	createReplicaSets(t, cs, ns, "after", 30, 8)
	labeled := waitAllLabeled(t, cs, ns, 160, 60*time.Second)

	// The audit log shows the expiry path was taken: a watch from a
	// compacted resourceVersion, then a fresh list.
	var staleWatches, relists int
	for _, e := range operatorReplicaSetRequests(t, cp, down) {
		switch {
		case e.Verb == "watch" && e.query().Get("sendInitialEvents") != "true":
			if v, err := strconv.ParseInt(e.query().Get("resourceVersion"), 10, 64); err == nil && v > 0 && v+1 < rev {
				staleWatches++
			}
		default: // a list, or a watch-list stream of the initial state
			relists++
		}
	}
	figure(t, "compaction-revision", rev)
	figure(t, "compaction-watches-from-compacted-revision", staleWatches)
	figure(t, "compaction-relists-after-restart", relists)
	figure(t, "compaction-replicasets-converged-after-restart", labeled.Sub(up))
	assert.Positive(t, staleWatches, "the operator re-watched from a compacted resourceVersion")
	assert.Positive(t, relists, "the operator listed ReplicaSets again")
}

// etcdClientURL reads etcd's client URL from its command line: the control
// plane keeps it to itself.
func etcdClientURL(t *testing.T, cp *controlplane.ControlPlane) string {
	t.Helper()
	pid, ok := cp.Pids()["etcd"]
	require.True(t, ok, "etcd runs")
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	require.NoError(t, err)
	for arg := range strings.SplitSeq(string(cmdline), "\x00") {
		if v, ok := strings.CutPrefix(arg, "--listen-client-urls="); ok {
			return strings.Split(v, ",")[0]
		}
	}
	t.Fatalf("no --listen-client-urls in etcd's command line %q", cmdline)
	return ""
}

// etcdCall posts a request to etcd's JSON gateway of the v3 API (the gRPC
// API's HTTP twin, served on the client URL) and decodes the answer.
func etcdCall(t *testing.T, base, path string, req, resp any) {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	r, err := http.Post(base+path, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer func() { _ = r.Body.Close() }()
	var raw bytes.Buffer
	_, err = raw.ReadFrom(r.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.StatusCode, "etcd %s: %s", path, raw.String())
	require.NoError(t, json.Unmarshal(raw.Bytes(), resp), "etcd %s: %s", path, raw.String())
}

// etcdRevision is an int64 as the gateway writes it: a JSON string.
type etcdRevision int64

func (r *etcdRevision) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	if err != nil {
		return fmt.Errorf("etcd revision %s: %w", b, err)
	}
	*r = etcdRevision(v)
	return nil
}

// etcdPut writes key and returns the store's revision after the write.
func etcdPut(t *testing.T, base, key, value string) int64 {
	t.Helper()
	var resp struct {
		Header struct {
			Revision etcdRevision `json:"revision"`
		} `json:"header"`
	}
	etcdCall(t, base, "/v3/kv/put", map[string]string{
		"key":   base64.StdEncoding.EncodeToString([]byte(key)),
		"value": base64.StdEncoding.EncodeToString([]byte(value)),
	}, &resp)
	require.Positive(t, int64(resp.Header.Revision))
	return int64(resp.Header.Revision)
}

// etcdCompact drops the history before rev; physical waits until it is
// gone from the backend.
func etcdCompact(t *testing.T, base string, rev int64) {
	t.Helper()
	var resp map[string]any
	etcdCall(t, base, "/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, &resp)
}

// auditEntry is the part of an audit event this test reads.
type auditEntry struct {
	AuditID    string    `json:"auditID"`
	Verb       string    `json:"verb"`
	UserAgent  string    `json:"userAgent"`
	RequestURI string    `json:"requestURI"`
	Received   time.Time `json:"requestReceivedTimestamp"`
}

func (e auditEntry) query() url.Values {
	u, err := url.ParseRequestURI(e.RequestURI)
	if err != nil {
		return url.Values{}
	}
	return u.Query()
}

// operatorReplicaSetRequests returns the operator's ReplicaSet lists and
// watches received after since, once each.
func operatorReplicaSetRequests(t *testing.T, cp *controlplane.ControlPlane, since time.Time) []auditEntry {
	t.Helper()
	f, err := os.Open(cp.AuditLogPath)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	seen := map[string]bool{}
	var out []auditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e auditEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a line being written
		}
		if seen[e.AuditID] || !strings.HasPrefix(e.UserAgent, operatorUserAgent) || e.Received.Before(since) {
			continue
		}
		seen[e.AuditID] = true
		out = append(out, e)
	}
	require.NoError(t, sc.Err())
	return out
}
