package podminauth

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
)

// Type is the extension's name in a collector configuration (`extensions: podminauth: …`).
var Type = component.MustNewType("podminauth")

// NewFactory returns the extension's factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(
		Type,
		func() component.Config { return &Config{} },
		func(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
			return &middleware{cfg: cfg.(*Config), logger: set.Logger}, nil
		},
		component.StabilityLevelDevelopment,
	)
}
