// Command etcd is the etcd server, built from go.etcd.io/etcd/server/v3 at the version
// pinned in go.mod. It is the same two lines as the main package of the go.etcd.io/etcd/v3
// module, whose newest release on the module proxy lags the server module's.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
