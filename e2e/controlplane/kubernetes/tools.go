//go:build tools

// Package tools pins the Kubernetes control-plane commands that e2e/controlplane/build
// compiles, so that `go mod tidy` keeps their whole dependency graph in go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
