//go:build tools

// Package tools pins the Kueue manager that e2e/controlplane/build compiles, so that
// `go mod tidy` keeps its dependency graph in go.sum. Kueue has its own module because
// its Kubernetes libraries, controller-runtime and their pins differ from those of
// k8s.io/kubernetes and of kwok.
package tools

import (
	_ "sigs.k8s.io/kueue/cmd/kueue"
)
