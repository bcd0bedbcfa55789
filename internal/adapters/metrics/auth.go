package metrics

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/kubernetes"
)

// How long review answers are reused, and how many are kept. A denial is
// kept shorter than an approval so that a freshly granted ClusterRole takes
// effect quickly.
const (
	authnCacheTTL    = time.Minute
	authnFailTTL     = 10 * time.Second
	authzAllowTTL    = time.Minute
	authzDenyTTL     = 10 * time.Second
	authCacheEntries = 1024
)

// authFilter protects a handler as controller-runtime's
// filters.WithAuthenticationAndAuthorization does, and as the API server
// itself would: the bearer token is authenticated with a TokenReview, and the
// resulting user must be allowed the request's verb on its path by a
// SubjectAccessReview (a non-resource URL, so an RBAC rule like
// `nonResourceURLs: ["/metrics"], verbs: ["get"]` grants a scrape).
type authFilter struct {
	client kubernetes.Interface
	log    *zap.Logger
	// authn and authz remember answers (authnResult, bool) for a while,
	// so a scraper presenting the same token every few seconds costs one
	// TokenReview and one SubjectAccessReview a minute, not two a scrape.
	authn, authz *utilcache.LRUExpireCache
}

// clockFunc is a func() time.Time as the caches' clock.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

type authnResult struct {
	ok   bool
	user authenticationv1.UserInfo
}

func newAuthFilter(client kubernetes.Interface, log *zap.Logger, now func() time.Time) *authFilter {
	return &authFilter{
		client: client,
		log:    log,
		authn:  utilcache.NewLRUExpireCacheWithClock(authCacheEntries, clockFunc(now)),
		authz:  utilcache.NewLRUExpireCacheWithClock(authCacheEntries, clockFunc(now)),
	}
}

func (f *authFilter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		user, ok, err := f.authenticate(r, token)
		if err != nil {
			f.log.Error("metrics authentication failed", zap.Error(err))
			http.Error(w, "Authentication error", http.StatusInternalServerError)
			return
		}
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		verb := strings.ToLower(r.Method)
		allowed, err := f.authorize(r, user, verb, r.URL.Path)
		if err != nil {
			f.log.Error("metrics authorization failed", zap.String("user", user.Username), zap.Error(err))
			http.Error(w, "Authorization error", http.StatusInternalServerError)
			return
		}
		if !allowed {
			http.Error(w, fmt.Sprintf("Forbidden: user %q may not %s %q", user.Username, verb, r.URL.Path), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearerToken reads "Authorization: Bearer <token>"; the scheme is
// case-insensitive as RFC 6750 says.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func (f *authFilter) authenticate(r *http.Request, token string) (authenticationv1.UserInfo, bool, error) {
	key := hash(token) // never keep tokens themselves in memory longer than a request
	if v, ok := f.authn.Get(key); ok {
		res := v.(authnResult)
		return res.user, res.ok, nil
	}
	tr, err := f.client.AuthenticationV1().TokenReviews().Create(r.Context(), &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token},
	}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, false, fmt.Errorf("create tokenreview: %w", err)
	}
	res := authnResult{ok: tr.Status.Authenticated, user: tr.Status.User}
	ttl := authnCacheTTL
	if !res.ok {
		ttl = authnFailTTL
	}
	f.authn.Add(key, res, ttl)
	return res.user, res.ok, nil
}

func (f *authFilter) authorize(r *http.Request, user authenticationv1.UserInfo, verb, path string) (bool, error) {
	key := authzKey(user, verb, path)
	if v, ok := f.authz.Get(key); ok {
		return v.(bool), nil
	}
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := f.client.AuthorizationV1().SubjectAccessReviews().Create(r.Context(), &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User:                  user.Username,
			UID:                   user.UID,
			Groups:                user.Groups,
			Extra:                 extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("create subjectaccessreview for %s: %w", user.Username, err)
	}
	allowed := sar.Status.Allowed && !sar.Status.Denied
	ttl := authzAllowTTL
	if !allowed {
		ttl = authzDenyTTL
	}
	f.authz.Add(key, allowed, ttl)
	return allowed, nil
}

// authzKey identifies an authorization question: everything the
// SubjectAccessReview is asked about.
// JSON writes the map's keys sorted.
func authzKey(user authenticationv1.UserInfo, verb, path string) string {
	key, _ := json.Marshal([]any{user.Username, user.UID, verb, path, slices.Sorted(slices.Values(user.Groups)), user.Extra})
	return hash(string(key))
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
