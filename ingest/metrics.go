package ingest

import "github.com/prometheus/client_golang/prometheus"

// Metrics are ingest's Prometheus instruments, registered on the registry the
// caller passes (never the global one).
type Metrics struct {
	Deliveries *prometheus.CounterVec   // by source id, kind and answer
	Latency    *prometheus.HistogramVec // by answer
	Spooled    prometheus.Counter
	Replayed   prometheus.Counter
	EnqueueErr prometheus.Counter
	GroupSize  prometheus.Histogram // deliveries per group statement
	GroupTime  prometheus.Histogram // how long a group statement and its commit took
}

// NewMetrics creates and registers the instruments.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leadgate_ingest_deliveries_total",
			Help: "Webhook deliveries by source and answer (queued, duplicate, rejected, unauthorized, malformed, unavailable, ...).",
		}, []string{"source", "kind", "outcome"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "leadgate_ingest_duration_seconds",
			Help:    "Time from request to answer for webhook deliveries.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5},
		}, []string{"outcome"}),
		Spooled:    prometheus.NewCounter(prometheus.CounterOpts{Name: "leadgate_ingest_spooled_total", Help: "Events written to the local spool while Postgres was unavailable."}),
		Replayed:   prometheus.NewCounter(prometheus.CounterOpts{Name: "leadgate_ingest_spool_replayed_total", Help: "Spooled events replayed into Postgres."}),
		EnqueueErr: prometheus.NewCounter(prometheus.CounterOpts{Name: "leadgate_ingest_enqueue_errors_total", Help: "Apply tasks not enqueued after commit (repaired by the stranded-event sweep)."}),
		GroupSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "leadgate_ingest_group_size",
			Help:    "Deliveries stored by one group statement (concurrent single-event deliveries share a statement and a commit).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		}),
		GroupTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "leadgate_ingest_group_seconds",
			Help:    "Time a group statement took, commit included; the deliveries arriving meanwhile wait for it.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5},
		}),
	}
	reg.MustRegister(m.Deliveries, m.Latency, m.Spooled, m.Replayed, m.EnqueueErr, m.GroupSize, m.GroupTime)
	return m
}
