//go:build tools

// Package tools pins the kubelet that e2e/controlplane/build compiles for the real node
// (e2e/cluster real-node on), so that `go mod tidy` keeps its dependency graph in go.sum.
// It has a module of its own, beside kubernetes/, so that only the runs that start a real
// node build it and the control plane's cache key stays as it is.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kubelet"
)
