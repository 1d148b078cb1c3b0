package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// runQuery measures `terraform query` over a vhost of n logical queues: each run's wall time,
// requests and results (which must be n).
func runQuery(ctx context.Context, e *env) error {
	prefix := "bench-" + e.id + "-"
	if err := e.declareLogicalQueues(ctx, prefix); err != nil {
		return err
	}
	dir := filepath.Join(e.o.dir, e.id, "query")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"main.tf": "terraform {\n  required_providers {\n    queuey = { source = \"queuey/queuey\" }\n  }\n}\n\nprovider \"queuey\" {}\n",
		"all.tfquery.hcl": fmt.Sprintf("list \"queuey_queue\" \"all\" {\n  provider = queuey\n  limit    = %d\n  config {\n    vhost = %q\n  }\n}\n",
			2*e.o.n, e.vhost),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("query: %d logical queues (%d queues) in vhost %q, terraform %s\n", e.o.n, 2*e.o.n, e.vhost, e.tfVersion)
	var walls []float64
	for r := 1; r <= e.o.runs; r++ {
		pr, err := e.phase(ctx, dir, kindQueuey, "query")
		if err != nil {
			return err
		}
		log, _ := os.ReadFile(filepath.Join(dir, "query.log"))
		found := len(resultLine.FindAll(log, -1))
		fmt.Printf("query run %d: %.2fs wall, %d results, %d requests (%s), provider CPU %.2fs\n",
			r, pr.wall.Seconds(), found, pr.counts.requests(), pr.counts.byKind(), pr.provCPU.Seconds())
		if found != e.o.n {
			return fmt.Errorf("terraform query listed %d queues, want %d; see %s", found, e.o.n, filepath.Join(dir, "query.log"))
		}
		walls = append(walls, pr.wall.Seconds())
	}
	fmt.Printf("query: median %.2fs for %d logical queues\n", median(walls), e.o.n)
	return nil
}

// resultLine is a line of `terraform query` output that shows one result.
var resultLine = regexp.MustCompile(`(?m)^list\.queuey_queue\.all\s`)

// declareLogicalQueues declares n logical queues (q and q.dead) named prefix + number, ten at a
// time.
func (e *env) declareLogicalQueues(ctx context.Context, prefix string) error {
	names := make(chan string)
	errs := make(chan error, 10)
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				args := map[string]any{"x-message-ttl": 86400000, "x-max-priority": 10}
				if strings.HasSuffix(name, ".dead") {
					args = map[string]any{}
				}
				if err := e.client.DeclareQueue(ctx, e.vhost, name, args); err != nil {
					errs <- fmt.Errorf("declaring %q: %w", name, err)
					return
				}
			}
		}()
	}
	start := time.Now()
	for i := range e.o.n {
		q := fmt.Sprintf("%s%04d", prefix, i)
		names <- q
		names <- q + ".dead"
	}
	close(names)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("query: declared %d queues in %.1fs\n", 2*e.o.n, time.Since(start).Seconds())
	return nil
}

// byKind renders the requests by kind, e.g. "GET /api/queues/{vhost}: 1".
func (c counters) byKind() string {
	keys := sortedKinds(c.kinds)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, c.kinds[k].count)
	}
	return strings.Join(parts, ", ")
}
