package syncer

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leadgate/leadgate/models"
)

// SyncMetrics are the CRM sync's Prometheus series. Counters are per process; queue depth and age are read
// from Postgres at scrape time, so every replica reports the same figures. A nil *SyncMetrics records nothing.
type SyncMetrics struct {
	calls     *prometheus.CounterVec
	limited   *prometheus.CounterVec
	failures  *prometheus.CounterVec
	delivered *prometheus.CounterVec
	lag       *prometheus.HistogramVec
	sideFx    *prometheus.CounterVec
	toWire    *prometheus.HistogramVec
}

// NewSyncMetrics registers the sync series on reg; store feeds the queue gauges (nil: no gauges).
func NewSyncMetrics(reg prometheus.Registerer, store *models.Store) *SyncMetrics {
	m := &SyncMetrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadgate_crm_calls_total",
			Help: "HTTP requests sent to CRMs, by destination, kind and status code."}, []string{"destination", "kind", "code"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadgate_crm_rate_limited_total",
			Help: "CRM answers that were rate limits (429), by destination."}, []string{"destination"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadgate_crm_failures_total",
			Help: "Failed contact writes, by destination and failure class."}, []string{"destination", "class"}),
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadgate_crm_synced_total",
			Help: "Contact versions delivered to CRMs, by destination."}, []string{"destination"}),
		lag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "leadgate_crm_sync_lag_seconds",
			Help:    "Time from a change entering the sync queue to its delivery, by destination kind.",
			Buckets: []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800, 7200}}, []string{"kind"}),
		sideFx: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leadgate_side_effects_total",
			Help: "Side effects handled, by outcome (sent, skipped, retry, dead)."}, []string{"outcome"}),
		// The limiter's margin (250 ms at 1 s windows) absorbs the delay between admission and the
		// request leaving; a p99 near it means the host is too loaded for the CRM's count to hold.
		toWire: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "leadgate_crm_admission_to_wire_seconds",
			Help:    "Time from the rate limiter admitting a CRM request to the request being written, by destination kind.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}}, []string{"kind"}),
	}
	reg.MustRegister(m.calls, m.limited, m.failures, m.delivered, m.lag, m.sideFx, m.toWire)
	if store != nil {
		reg.MustRegister(&queueCollector{store: store})
	}
	return m
}

func (m *SyncMetrics) call(c *Conn, code string) {
	if m == nil {
		return
	}
	dest := strings.TrimPrefix(c.Key, "dest:")
	m.calls.WithLabelValues(dest, c.Kind, code).Inc()
	if code == "429" {
		m.limited.WithLabelValues(dest).Inc()
	}
}

func (m *SyncMetrics) admittedToWire(kind string, d time.Duration) {
	if m != nil {
		m.toWire.WithLabelValues(kind).Observe(d.Seconds())
	}
}

func (m *SyncMetrics) failure(destID int64, class string) {
	if m != nil {
		m.failures.WithLabelValues(strconv.FormatInt(destID, 10), class).Inc()
	}
}

func (m *SyncMetrics) synced(destID int64, kind string, lag time.Duration) {
	if m != nil {
		m.delivered.WithLabelValues(strconv.FormatInt(destID, 10)).Inc()
		m.lag.WithLabelValues(kind).Observe(lag.Seconds())
	}
}

func (m *SyncMetrics) sideEffect(outcome string) {
	if m != nil {
		m.sideFx.WithLabelValues(outcome).Inc()
	}
}

var (
	queueDepthDesc = prometheus.NewDesc("leadgate_crm_queue_depth", "Contacts waiting to be synced, by destination and status (pending, dead).",
		[]string{"destination", "kind", "status"}, nil)
	queueAgeDesc = prometheus.NewDesc("leadgate_crm_queue_oldest_seconds", "Age of the oldest pending sync item, by destination.",
		[]string{"destination", "kind"}, nil)
	outboxDepthDesc = prometheus.NewDesc("leadgate_outbox_pending", "Pending outbox rows, by kind.", []string{"kind"}, nil)
	outboxAgeDesc   = prometheus.NewDesc("leadgate_outbox_oldest_seconds", "Age of the oldest pending outbox row, by kind.", []string{"kind"}, nil)
)

// queueCollector reads queue and outbox figures from Postgres when scraped.
type queueCollector struct{ store *models.Store }

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- queueAgeDesc
	ch <- outboxDepthDesc
	ch <- outboxAgeDesc
}

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if gs, err := q.store.SyncQueueGauges(ctx); err == nil {
		for _, g := range gs {
			id := strconv.FormatInt(g.DestinationID, 10)
			ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(g.Pending), id, g.Kind, "pending")
			ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(g.Dead), id, g.Kind, "dead")
			ch <- prometheus.MustNewConstMetric(queueAgeDesc, prometheus.GaugeValue, g.OldestSec, id, g.Kind)
		}
	}
	if gs, err := q.store.OutboxGauges(ctx); err == nil {
		for _, g := range gs {
			ch <- prometheus.MustNewConstMetric(outboxDepthDesc, prometheus.GaugeValue, float64(g.Pending), g.Kind)
			ch <- prometheus.MustNewConstMetric(outboxAgeDesc, prometheus.GaugeValue, g.OldestSec, g.Kind)
		}
	}
}
