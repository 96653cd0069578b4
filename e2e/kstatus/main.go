// Command kstatus prints the health that sigs.k8s.io/cli-utils kstatus (the library
// Flux and kpt use) computes for Kubernetes objects, so e2e tests can check cadre's
// status conditions against the real rules rather than a copy of them.
//
// It reads JSON from stdin: one object, a List (`kubectl get -o json` of several), or a
// stream of either, and prints one line per object:
//
//	<kind>/<name> <status>
//
// where status is kstatus's verdict (Current, InProgress, Failed, Terminating, ...).
// With -m the line ends with kstatus's message after a tab.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

func main() {
	withMessage := flag.Bool("m", false, "print kstatus's message after a tab")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *withMessage); err != nil {
		fmt.Fprintln(os.Stderr, "kstatus:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer, withMessage bool) error {
	dec := json.NewDecoder(in)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading JSON: %w", err)
		}
		// Integers as int64, as the API machinery holds them (kstatus reads
		// metadata.generation as one); encoding/json alone would give float64.
		var obj map[string]interface{}
		if err := utiljson.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("reading JSON: %w", err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return err
			}
			for i := range list.Items {
				if err := report(out, &list.Items[i], withMessage); err != nil {
					return err
				}
			}
			continue
		}
		if err := report(out, u, withMessage); err != nil {
			return err
		}
	}
}

func report(out io.Writer, u *unstructured.Unstructured, withMessage bool) error {
	res, err := status.Compute(u)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", u.GetKind(), u.GetName(), err)
	}
	if withMessage {
		_, err = fmt.Fprintf(out, "%s/%s %s\t%s\n", u.GetKind(), u.GetName(), res.Status, res.Message)
	} else {
		_, err = fmt.Fprintf(out, "%s/%s %s\n", u.GetKind(), u.GetName(), res.Status)
	}
	return err
}
