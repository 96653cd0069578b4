//go:build tools

// Package tools pins the kwok command that e2e/controlplane/build compiles, so that
// `go mod tidy` keeps its dependency graph in go.sum. kwok has its own module because
// its Kubernetes libraries (v0.36.1 and their pins) differ from those of k8s.io/kubernetes.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
