// Command coredns is CoreDNS with only the plugins the real node's cluster DNS uses
// (e2e/realnode.bash): bind puts it on the bridge's address, kubernetes answers the
// cluster.local zone from the API server, errors and log say what went wrong and what was
// asked, health and ready answer the harness's checks. Upstream's coredns.go imports
// core/plugin, which registers every plugin, cloud DNS providers included; registering only
// these keeps a cold build to a fraction of its time. The directives' order is CoreDNS's
// own (core/dnsserver).
package main

import (
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"

	"github.com/coredns/coredns/coremain"
)

func main() {
	coremain.Run()
}
