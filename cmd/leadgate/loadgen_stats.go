package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// maxAnswerBytes caps how much of an answer loadgen reads.
const maxAnswerBytes = 64 << 10

// answerStatus reads the "status" of a webhook answer ("queued",
// "duplicate", "rejected") and closes the body; "" for anything else.
func answerStatus(resp *http.Response) string {
	defer resp.Body.Close()
	var a struct {
		Status string `json:"status"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	_, _ = io.Copy(io.Discard, resp.Body) // let the connection be reused
	if resp.StatusCode == http.StatusOK && json.Unmarshal(b, &a) == nil {
		return a.Status
	}
	return ""
}

// recorder is one worker's tally; workers never share one, so it needs no lock.
type recorder struct {
	latencies []time.Duration // of answered requests
	byCode    map[int]int
	byStatus  map[string]int
	dups      int
	errors    int
	firstErr  string
}

func newRecorder() *recorder {
	return &recorder{byCode: map[int]int{}, byStatus: map[string]int{}, latencies: make([]time.Duration, 0, 4096)}
}

func (r *recorder) answer(code int, status string, took time.Duration, dup bool) {
	r.latencies = append(r.latencies, took)
	r.byCode[code]++
	if status != "" {
		r.byStatus[status]++
	}
	if dup {
		r.dups++
	}
}

func (r *recorder) transportError(err error) {
	r.errors++
	if r.firstErr == "" {
		r.firstErr = err.Error()
	}
}

// loadgenResult is the run's summary.
type loadgenResult struct {
	Elapsed   time.Duration
	Sent      int // requests answered or failed
	Dups      int // deliveries that repeated an earlier one
	Answered  int
	Accepted  int // 200 answers: the event is durable (queued, duplicate or rejected)
	ByCode    map[int]int
	ByStatus  map[string]int
	Errors    int
	FirstErr  string
	P50, P95  time.Duration
	P99, Max  time.Duration
	TargetRPS float64
}

func summarize(recs []*recorder, elapsed time.Duration, cfg loadgenConfig) *loadgenResult {
	res := &loadgenResult{Elapsed: elapsed, ByCode: map[int]int{}, ByStatus: map[string]int{}, TargetRPS: cfg.Rate}
	var all []time.Duration
	for _, r := range recs {
		all = append(all, r.latencies...)
		for k, v := range r.byCode {
			res.ByCode[k] += v
		}
		for k, v := range r.byStatus {
			res.ByStatus[k] += v
		}
		res.Dups += r.dups
		res.Errors += r.errors
		if res.FirstErr == "" {
			res.FirstErr = r.firstErr
		}
	}
	res.Answered = len(all)
	res.Sent = res.Answered + res.Errors
	res.Accepted = res.ByCode[http.StatusOK]
	slices.Sort(all)
	res.P50, res.P95, res.P99 = percentile(all, 50), percentile(all, 95), percentile(all, 99)
	if len(all) > 0 {
		res.Max = all[len(all)-1]
	}
	return res
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func (r *loadgenResult) perSecond(n int) float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(n) / r.Elapsed.Seconds()
}

// print writes the human summary; the labels are stable for scripts.
func (r *loadgenResult) print(w io.Writer) {
	fmt.Fprintf(w, "elapsed     %.2fs\n", r.Elapsed.Seconds())
	fmt.Fprintf(w, "sent        %d (%.1f/s), %d repeats of earlier deliveries, %d transport errors\n",
		r.Sent, r.perSecond(r.Sent), r.Dups, r.Errors)
	if r.FirstErr != "" {
		fmt.Fprintf(w, "first error %s\n", r.FirstErr)
	}
	fmt.Fprintf(w, "accepted/s  %.1f (%d answers 200: %s)\n", r.perSecond(r.Accepted), r.Accepted, joinCounts(r.ByStatus))
	fmt.Fprintf(w, "queued/s    %.1f (new events)\n", r.perSecond(r.ByStatus["queued"]))
	codes := map[string]int{}
	for c, n := range r.ByCode {
		codes[strconv.Itoa(c)] = n
	}
	fmt.Fprintf(w, "answers     %s\n", joinCounts(codes))
	fmt.Fprintf(w, "latency     p50 %s  p95 %s  p99 %s  max %s\n", ms(r.P50), ms(r.P95), ms(r.P99), ms(r.Max))
	if r.TargetRPS > 0 && r.perSecond(r.Sent) < 0.95*r.TargetRPS {
		fmt.Fprintf(w, "note        sent %.1f/s, short of the %g/s asked for: the target or this machine could not keep up\n",
			r.perSecond(r.Sent), r.TargetRPS)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// joinCounts renders {"queued":3,"duplicate":1} as "duplicate 1, queued 3".
func joinCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
