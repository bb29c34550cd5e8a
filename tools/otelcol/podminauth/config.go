package podminauth

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"go.opentelemetry.io/collector/config/configopaque"
)

// Config says which clients the receiver admits. TLS itself (the receiver's `tls.client_ca_file`)
// verifies the chain and the validity period; this extension checks who the certificate names.
type Config struct {
	// URIPrefix is what the client certificate's one URI SAN must start with, followed by one
	// non-empty path segment, e.g. `spiffe://prod.podmin.internal/system/otel-logs/node/`.
	URIPrefix string `mapstructure:"uri_prefix"`
	// Headers are required request headers (gRPC metadata) with their exact values, e.g. the
	// pairs of the `otel-logs-headers --system` secret. Values are opaque: never logged.
	Headers map[string]configopaque.String `mapstructure:"headers"`
}

// An HTTP field name (RFC 9110 token); gRPC metadata keys are its lowercase subset.
var headerName = regexp.MustCompile(`^[!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+$`)

// Validate lists every bad value, naming the field and what is allowed.
func (c *Config) Validate() error {
	var errs []error
	if c.URIPrefix == "" {
		errs = append(errs, errors.New("uri_prefix: required (e.g. spiffe://<cluster>.podmin.internal/system/otel-logs/node/)"))
	} else if u, err := url.Parse(c.URIPrefix); err != nil || u.Scheme != "spiffe" || u.Host == "" || !strings.HasSuffix(c.URIPrefix, "/") || u.RawQuery != "" || u.Fragment != "" {
		errs = append(errs, fmt.Errorf("uri_prefix %q: must be a spiffe://<trust domain>/<path>/ URI ending in '/'", c.URIPrefix))
	}
	for name, value := range c.Headers {
		if !headerName.MatchString(name) {
			errs = append(errs, fmt.Errorf("headers: name %q is not an HTTP field name (letters, digits and !#$%%&'*+.^_`|~-)", name))
		}
		if value == "" || strings.ContainsAny(string(value), "\r\n\x00") {
			errs = append(errs, fmt.Errorf("headers.%s: the value must be non-empty, without CR, LF or NUL", name))
		}
	}
	return errors.Join(errs...)
}
