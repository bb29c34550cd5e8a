package podminauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

const prefix = "spiffe://prod.podmin.internal/system/otel-logs/node/"

func leaf(uris ...string) []*x509.Certificate {
	cert := &x509.Certificate{}
	for _, u := range uris {
		parsed, err := url.Parse(u)
		if err != nil {
			panic(err)
		}
		cert.URIs = append(cert.URIs, parsed)
	}
	return []*x509.Certificate{cert}
}

func TestValidateNamesEveryBadField(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want []string
	}{
		{Config{}, []string{"uri_prefix: required"}},
		{Config{URIPrefix: "https://prod.podmin.internal/x/"}, []string{`uri_prefix "https://prod.podmin.internal/x/": must be a spiffe://`}},
		{Config{URIPrefix: "spiffe://prod.podmin.internal/system/otel-logs/node"}, []string{"ending in '/'"}},
		{
			Config{URIPrefix: prefix, Headers: map[string]configopaque.String{"bad name": "v", "X-Ok": "", "X-Crlf": "a\r\nb"}},
			[]string{`headers: name "bad name" is not an HTTP field name`, "headers.X-Ok: the value must be non-empty", "headers.X-Crlf: the value must be non-empty, without CR, LF or NUL"},
		},
	} {
		err := tc.cfg.Validate()
		if err == nil {
			t.Fatalf("%+v: want an error", tc.cfg)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q does not contain %q", tc.cfg, err, w)
			}
		}
	}
	ok := Config{URIPrefix: prefix, Headers: map[string]configopaque.String{"Authorization": "Bearer x"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
}

func TestAdmitCertificate(t *testing.T) {
	m := &middleware{cfg: &Config{URIPrefix: prefix}, logger: zap.NewNop()}
	for name, tc := range map[string]struct {
		chain []*x509.Certificate
		ok    bool
	}{
		"the node's leaf":                {leaf(prefix + "ip-10-0-1-5.ec2.internal"), true},
		"no certificate":                 {nil, false},
		"no URI SAN":                     {leaf(), false},
		"two URI SANs":                   {leaf(prefix+"a", prefix+"b"), false},
		"a Pod's leaf":                   {leaf("spiffe://prod.podmin.internal/ns/default/pod/web-0"), false},
		"another cluster's node":         {leaf("spiffe://staging.podmin.internal/system/otel-logs/node/a"), false},
		"the prefix alone":               {leaf(prefix), false},
		"a deeper path under the prefix": {leaf(prefix + "a/b"), false},
	} {
		if err := m.admitCertificate(tc.chain); (err == nil) != tc.ok {
			t.Errorf("%s: admitted=%v, want %v (err %v)", name, err == nil, tc.ok, err)
		}
	}
}

func TestHTTPMiddleware(t *testing.T) {
	m := &middleware{cfg: &Config{URIPrefix: prefix, Headers: map[string]configopaque.String{"Authorization": "Bearer x"}}, logger: zap.NewNop()}
	wrap, err := m.GetHTTPHandler(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reached := 0
	handler, err := wrap(context.Background(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached++ }))
	if err != nil {
		t.Fatal(err)
	}
	serve := func(state *tls.ConnectionState, auth ...string) int {
		r := httptest.NewRequest(http.MethodPost, "/v1/logs", nil)
		r.TLS = state
		for _, a := range auth {
			r.Header.Add("Authorization", a)
		}
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		return w.Code
	}
	node := &tls.ConnectionState{PeerCertificates: leaf(prefix + "n1")}
	if code := serve(nil, "Bearer x"); code != http.StatusUnauthorized {
		t.Errorf("plain HTTP: %d", code)
	}
	if code := serve(node); code != http.StatusUnauthorized {
		t.Errorf("no header: %d", code)
	}
	if code := serve(node, "Bearer y"); code != http.StatusUnauthorized {
		t.Errorf("wrong header: %d", code)
	}
	if code := serve(node, "Bearer x", "Bearer x"); code != http.StatusUnauthorized {
		t.Errorf("repeated header: %d", code)
	}
	if code := serve(node, "Bearer x"); code != http.StatusOK || reached != 1 {
		t.Errorf("admitted request: %d, handler reached %d times", code, reached)
	}
}

func TestGRPCInterceptor(t *testing.T) {
	m := &middleware{cfg: &Config{URIPrefix: prefix, Headers: map[string]configopaque.String{"X-Scope-OrgID": "prod"}}, logger: zap.NewNop()}
	opts, err := m.GetGRPCServerOptions(context.Background())
	if err != nil || len(opts) != 2 {
		t.Fatalf("options: %v, %v", opts, err)
	}
	ctx := func(chain []*x509.Certificate, md metadata.MD) context.Context {
		c := peer.NewContext(context.Background(), &peer.Peer{AuthInfo: credentials.TLSInfo{State: tls.ConnectionState{PeerCertificates: chain}}})
		return metadata.NewIncomingContext(c, md)
	}
	if err := m.admitGRPC(ctx(leaf(prefix+"n1"), metadata.Pairs("x-scope-orgid", "prod"))); err != nil {
		t.Errorf("node with metadata refused: %v", err)
	}
	for name, c := range map[string]context.Context{
		"no peer":     context.Background(),
		"Pod leaf":    ctx(leaf("spiffe://prod.podmin.internal/ns/default/pod/web-0"), metadata.Pairs("x-scope-orgid", "prod")),
		"no metadata": ctx(leaf(prefix+"n1"), nil),
	} {
		if got := status.Code(m.admitGRPC(c)); got != codes.Unauthenticated {
			t.Errorf("%s: %v, want Unauthenticated", name, got)
		}
	}
	var _ grpc.ServerOption = opts[0]
}
