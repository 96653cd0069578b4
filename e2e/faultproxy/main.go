// faultproxy: an HTTPS proxy between a Kubernetes client and kube-apiserver that breaks
// the wire on command, for e2e/tests/90-faults.bats (docs/e2e.md, "Faults on the wire").
//
// It terminates TLS with a certificate of the cluster's CA, so clients keep verifying the
// server, and forwards every request (watches streamed as they come) to the API server;
// bearer tokens pass through, which is how the tests' controller authenticates. Faults,
// set on the plain-HTTP control address:
//
//	GET /fault?kind=cut                         close every client connection now (mid-watch,
//	                                            mid-request); new ones are accepted at once
//	GET /fault?kind=blackhole&for=30s           for 30 s nothing moves: new requests wait
//	                                            unanswered, streams stop, connections stay open
//	GET /fault?kind=latency&delay=1s&for=20s    every request waits 1 s before it is forwarded
//	GET /fault?kind=status&code=429&for=10s     every request is answered 429 (Retry-After: 1)
//	                                            or 503, as the API server words them
//	GET /fault?kind=clear                       end every fault
//	GET /stats                                  requests, answered, injected, cut connections
//
// Why a small tool rather than toxiproxy: the faults asked for include HTTP answers (429,
// 503) inside TLS, which a TCP-level proxy cannot make; this one sees requests, so it can,
// and still cuts and stalls connections. Standard library only, so it builds offline.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

type proxy struct {
	mu          sync.Mutex
	conns       map[net.Conn]struct{}
	blackUntil  time.Time
	blackEnd    chan struct{} // closed when the current black hole ends
	delay       time.Duration
	delayUntil  time.Time
	status      int
	statusUntil time.Time

	requests, answered, injected, cut atomic.Int64
	rp                                *httputil.ReverseProxy
}

func (p *proxy) trackConn(c net.Conn, s http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch s {
	case http.StateNew:
		p.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(p.conns, c)
	}
}

// blackhole returns a channel that is closed when the current black hole ends, or nil.
func (p *proxy) blackhole() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Now().Before(p.blackUntil) {
		return p.blackEnd
	}
	return nil
}

// waitBlackhole blocks while a black hole lasts; false when ctx ended first.
func (p *proxy) waitBlackhole(ctx context.Context) bool {
	for {
		ch := p.blackhole()
		if ch == nil {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// stallWriter stops a response stream for as long as a black hole lasts.
type stallWriter struct {
	http.ResponseWriter
	p   *proxy
	ctx context.Context
}

func (w stallWriter) Write(b []byte) (int, error) {
	if !w.p.waitBlackhole(w.ctx) {
		return 0, w.ctx.Err()
	}
	return w.ResponseWriter.Write(b)
}

func (w stallWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var reasons = map[int]string{429: "TooManyRequests", 503: "ServiceUnavailable"}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	if !p.waitBlackhole(r.Context()) {
		return
	}
	p.mu.Lock()
	delay := time.Duration(0)
	if time.Now().Before(p.delayUntil) {
		delay = p.delay
	}
	status := 0
	if time.Now().Before(p.statusUntil) {
		status = p.status
	}
	p.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if status != 0 {
		p.injected.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(status)
		body, _ := json.Marshal(map[string]any{
			"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": status,
			"reason":  reasons[status],
			"message": fmt.Sprintf("faultproxy: %d injected", status),
			"details": map[string]any{"retryAfterSeconds": 1},
		})
		w.Write(body)
		return
	}
	p.rp.ServeHTTP(stallWriter{w, p, r.Context()}, r)
	p.answered.Add(1)
}

func (p *proxy) control(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	span := func() (time.Duration, error) {
		d, err := time.ParseDuration(q.Get("for"))
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("for: a duration such as 30s, not %q", q.Get("for"))
		}
		return d, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch q.Get("kind") {
	case "cut":
		n := 0
		for c := range p.conns {
			c.Close()
			delete(p.conns, c)
			n++
		}
		p.cut.Add(int64(n))
		fmt.Fprintf(w, "cut %d connections\n", n)
	case "blackhole":
		d, err := span()
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		p.blackUntil = time.Now().Add(d)
		end := make(chan struct{})
		p.blackEnd = end
		time.AfterFunc(d, func() { close(end) })
		fmt.Fprintf(w, "black hole for %s\n", d)
	case "latency":
		d, err := span()
		delay, err2 := time.ParseDuration(q.Get("delay"))
		if err != nil || err2 != nil || delay <= 0 {
			http.Error(w, "latency needs delay= and for= durations", 400)
			return
		}
		p.delay, p.delayUntil = delay, time.Now().Add(d)
		fmt.Fprintf(w, "%s added to every request for %s\n", delay, d)
	case "status":
		d, err := span()
		code, err2 := strconv.Atoi(q.Get("code"))
		if err != nil || err2 != nil || reasons[code] == "" {
			http.Error(w, "status needs code=429|503 and for=", 400)
			return
		}
		p.status, p.statusUntil = code, time.Now().Add(d)
		fmt.Fprintf(w, "every request answered %d for %s\n", code, d)
	case "clear":
		p.blackUntil, p.delayUntil, p.statusUntil = time.Time{}, time.Time{}, time.Time{}
		if p.blackEnd != nil {
			select {
			case <-p.blackEnd:
			default:
				close(p.blackEnd)
			}
		}
		p.blackEnd = nil
		fmt.Fprintln(w, "cleared")
	default:
		http.Error(w, "kind: cut, blackhole, latency, status or clear", 400)
	}
}

func (p *proxy) stats(w http.ResponseWriter, _ *http.Request) {
	json.NewEncoder(w).Encode(map[string]int64{
		"requests": p.requests.Load(), "answered": p.answered.Load(),
		"injected": p.injected.Load(), "cut": p.cut.Load(),
	})
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address for clients (HTTPS)")
	upstream := flag.String("upstream", "", "the API server's URL")
	ca := flag.String("ca", "", "the cluster CA: verifies the API server")
	cert := flag.String("cert", "", "the proxy's certificate, signed by the cluster CA")
	key := flag.String("key", "", "its key")
	ctl := flag.String("control", "127.0.0.1:0", "plain-HTTP address for /fault and /stats")
	ready := flag.String("ready", "", "file to write \"LISTEN CONTROL\" to once both listen")
	flag.Parse()
	if *upstream == "" || *ca == "" || *cert == "" || *key == "" {
		log.Fatal("faultproxy: -upstream, -ca, -cert and -key are required")
	}
	target, err := url.Parse(*upstream)
	if err != nil {
		log.Fatalf("faultproxy: -upstream: %v", err)
	}
	pem, err := os.ReadFile(*ca)
	if err != nil {
		log.Fatalf("faultproxy: -ca: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		log.Fatal("faultproxy: -ca holds no certificate")
	}
	transport := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2: true,
		MaxIdleConns:      100,
		IdleConnTimeout:   90 * time.Second,
	}
	p := &proxy{conns: map[net.Conn]struct{}{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorLog:      log.New(os.Stderr, "faultproxy: ", log.LstdFlags),
	}
	pair, err := tls.LoadX509KeyPair(*cert, *key)
	if err != nil {
		log.Fatalf("faultproxy: -cert/-key: %v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("faultproxy: -listen: %v", err)
	}
	cln, err := net.Listen("tcp", *ctl)
	if err != nil {
		log.Fatalf("faultproxy: -control: %v", err)
	}
	srv := &http.Server{
		Handler:   p,
		ConnState: p.trackConn,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair},
			NextProtos: []string{"h2", "http/1.1"}},
		ErrorLog: log.New(os.Stderr, "faultproxy: ", log.LstdFlags),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/fault", p.control)
	mux.HandleFunc("/stats", p.stats)
	go func() { log.Fatal(http.Serve(cln, mux)) }()
	if *ready != "" {
		line := fmt.Sprintf("%s %s\n", ln.Addr(), cln.Addr())
		if err := os.WriteFile(*ready, []byte(line), 0o644); err != nil {
			log.Fatalf("faultproxy: -ready: %v", err)
		}
	}
	log.Fatal(srv.ServeTLS(ln, "", ""))
}
