// Package podminauth is a Collector server middleware extension admitting only podmin nodes'
// log-export clients: a TLS client certificate whose one URI SAN is under a configured SPIFFE
// prefix, and, when configured, the headers of the `otel-logs-headers --system` secret.
//
// It is a middleware, not an `extensionauth.Server`: a server authenticator sees only headers,
// while a middleware sees the *http.Request (its TLS state) and, for gRPC, the peer's
// credentials.TLSInfo.
package podminauth

import (
	"context"
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

type middleware struct {
	component.StartFunc
	component.ShutdownFunc
	cfg    *Config
	logger *zap.Logger
}

var (
	_ extensionmiddleware.HTTPServer = (*middleware)(nil)
	_ extensionmiddleware.GRPCServer = (*middleware)(nil)
)

// errRefused is what a refused client is told; the reason goes to the collector's log only.
var errRefused = errors.New("unauthenticated")

// admitCertificate checks the verified client leaf names one URI under the prefix, followed by
// a single non-empty path segment (the node ID).
func (m *middleware) admitCertificate(chain []*x509.Certificate) error {
	if len(chain) == 0 {
		return errors.New("no client certificate")
	}
	leaf := chain[0]
	if len(leaf.URIs) != 1 {
		return errors.New("the client certificate must carry exactly one URI SAN")
	}
	uri := leaf.URIs[0].String()
	rest, ok := strings.CutPrefix(uri, m.cfg.URIPrefix)
	if !ok || rest == "" || strings.ContainsAny(rest, "/?#") {
		return errors.New("the client certificate's URI SAN " + uri + " is not under " + m.cfg.URIPrefix)
	}
	return nil
}

// admitHeaders checks each required header is present once with its exact value.
func (m *middleware) admitHeaders(get func(name string) []string) error {
	for name, want := range m.cfg.Headers {
		got := get(name)
		if len(got) != 1 || subtle.ConstantTimeCompare([]byte(got[0]), []byte(want)) != 1 {
			return errors.New("required header " + name + " missing or wrong")
		}
	}
	return nil
}

// GetHTTPHandler wraps the OTLP/HTTP handler: refused requests get 401 and never reach it.
func (m *middleware) GetHTTPHandler(_ context.Context) (extensionmiddleware.WrapHTTPHandlerFunc, error) {
	return func(_ context.Context, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var err error
			if r.TLS == nil {
				err = errors.New("not a TLS connection")
			} else if err = m.admitCertificate(r.TLS.PeerCertificates); err == nil {
				err = m.admitHeaders(r.Header.Values)
			}
			if err != nil {
				m.logger.Info("refused an OTLP/HTTP request", zap.String("remote", r.RemoteAddr), zap.String("reason", err.Error()))
				http.Error(w, errRefused.Error(), http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		}), nil
	}, nil
}

// admitGRPC checks the peer's verified TLS chain and the incoming metadata.
func (m *middleware) admitGRPC(ctx context.Context) error {
	var err error
	p, ok := peer.FromContext(ctx)
	tlsInfo, isTLS := credentials.TLSInfo{}, false
	if ok {
		tlsInfo, isTLS = p.AuthInfo.(credentials.TLSInfo)
	}
	if !isTLS {
		err = errors.New("not a TLS connection")
	} else if err = m.admitCertificate(tlsInfo.State.PeerCertificates); err == nil {
		md, _ := metadata.FromIncomingContext(ctx)
		err = m.admitHeaders(func(name string) []string { return md.Get(name) })
	}
	if err != nil {
		remote := ""
		if ok && p.Addr != nil {
			remote = p.Addr.String()
		}
		m.logger.Info("refused an OTLP/gRPC call", zap.String("remote", remote), zap.String("reason", err.Error()))
		return status.Error(codes.Unauthenticated, errRefused.Error())
	}
	return nil
}

// GetGRPCServerOptions adds interceptors (chained after the receiver's own) to every call.
func (m *middleware) GetGRPCServerOptions(_ context.Context) ([]grpc.ServerOption, error) {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if err := m.admitGRPC(ctx); err != nil {
				return nil, err
			}
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			if err := m.admitGRPC(ss.Context()); err != nil {
				return err
			}
			return handler(srv, ss)
		}),
	}, nil
}
