// Package jsonlexporter is a logs exporter appending every batch it receives to a file as one
// line of OTLP/JSON, so a test can read exactly what the receiver accepted. (The core debug
// exporter prints a human-readable dump to the collector's log instead; the file exporter is
// not a core component.)
package jsonlexporter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Type is the exporter's name in a collector configuration (`exporters: jsonl: …`).
var Type = component.MustNewType("jsonl")

// Config names the file the exporter appends to.
type Config struct {
	// Path of the output file, created 0600 when missing.
	Path string `mapstructure:"path"`
}

// Validate requires the path.
func (c *Config) Validate() error {
	if c.Path == "" {
		return errors.New("path: required (the file received logs are appended to)")
	}
	return nil
}

type fileExporter struct {
	path string
	mu   sync.Mutex
	file *os.File
	json plog.JSONMarshaler
}

func (e *fileExporter) start(context.Context, component.Host) error {
	f, err := os.OpenFile(e.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("opening %s: %w", e.path, err)
	}
	e.file = f
	return nil
}

func (e *fileExporter) shutdown(context.Context) error {
	if e.file == nil {
		return nil
	}
	return e.file.Close()
}

func (e *fileExporter) push(_ context.Context, logs plog.Logs) error {
	line, err := e.json.MarshalLogs(logs)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err = e.file.Write(append(line, '\n'))
	return err
}

// NewFactory returns the exporter's factory (logs only; synchronous, no queue: a request is
// answered after its line is written).
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		Type,
		func() component.Config { return &Config{} },
		exporter.WithLogs(func(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
			e := &fileExporter{path: cfg.(*Config).Path}
			return exporterhelper.NewLogs(ctx, set, cfg, e.push,
				exporterhelper.WithStart(e.start),
				exporterhelper.WithShutdown(e.shutdown),
				exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}))
		}, component.StabilityLevelDevelopment),
	)
}
