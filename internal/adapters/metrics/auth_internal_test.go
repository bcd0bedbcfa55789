package metrics

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Answers are reused until they expire (a denial sooner than an approval),
// and the caches hold at most authCacheEntries answers each.
func TestAuthFilterReusesAnswersUntilTheyExpire(t *testing.T) {
	t.Parallel()
	clock := &fakeNow{t: time.Now()}
	var reviews, sars atomic.Int32
	cs := fake.NewClientset()
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		reviews.Add(1)
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview).DeepCopy()
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: tr.Spec.Token}}
		return true, tr, nil
	})
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sars.Add(1)
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		sar.Status.Allowed = sar.Spec.User != "denied"
		return true, sar, nil
	})
	h := newAuthFilter(cs, zap.NewNop(), clock.now)
	handler := h.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	serve := func(token string) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		handler.ServeHTTP(rec, req)
		return rec.Code
	}

	assert.Equal(t, http.StatusOK, serve("allowed"))
	assert.Equal(t, http.StatusForbidden, serve("denied"))
	assert.Equal(t, http.StatusOK, serve("allowed"))
	assert.Equal(t, http.StatusForbidden, serve("denied"))
	assert.Equal(t, int32(2), reviews.Load(), "token reviews reused")
	assert.Equal(t, int32(2), sars.Load(), "access reviews reused")

	clock.add(authzDenyTTL + time.Second)
	assert.Equal(t, http.StatusForbidden, serve("denied"))
	assert.Equal(t, http.StatusOK, serve("allowed"))
	assert.Equal(t, int32(3), sars.Load(), "a denial expires sooner than an approval")
	assert.Equal(t, int32(2), reviews.Load(), "authentications still reused")

	clock.add(authzAllowTTL)
	assert.Equal(t, http.StatusOK, serve("allowed"))
	assert.Equal(t, int32(3), reviews.Load(), "an expired authentication is asked again")
	assert.Equal(t, int32(4), sars.Load(), "an expired approval is asked again")

	for i := range authCacheEntries + 10 {
		assert.Equal(t, http.StatusOK, serve("token-"+strconv.Itoa(i)))
	}
	assert.LessOrEqual(t, len(h.authn.Keys()), authCacheEntries, "authentications past the bound")
	assert.LessOrEqual(t, len(h.authz.Keys()), authCacheEntries, "authorizations past the bound")
	before := reviews.Load()
	assert.Equal(t, http.StatusOK, serve("token-"+strconv.Itoa(authCacheEntries+9)))
	assert.Equal(t, before, reviews.Load(), "the newest entry is kept")
}

type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}
