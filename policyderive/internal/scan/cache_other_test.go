//go:build !linux

package scan

var osSteps []changeStep
