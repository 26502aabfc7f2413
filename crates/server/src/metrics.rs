//! This process's metrics for Prometheus, encoded by `prometheus-client` in the OpenMetrics
//! text format (`http::metrics` serves them at `/metrics`).
//!
//! Events are counted and timed where they happen, in this process: code holding the
//! [`Domain`](crate::Domain) calls e.g. `app.metrics.job_finished(…)`. Figures the database holds (queue
//! depth, outbox backlog, runners) are read at scrape time into gauges just before encoding.
//! Counters and histograms are per process; with several replicas, sum them across instances.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use benchgate_store::{JobKind, JobState, Store, StoreError};
use chrono::{DateTime, Utc};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::runner_status::{RunnerStatus, running_job};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    kind: &'static str,
    outcome: &'static str,
}

impl JobLabels {
    fn new(kind: JobKind, succeeded: bool) -> Self {
        JobLabels {
            kind: kind.as_str(),
            outcome: if succeeded { "succeeded" } else { "failed" },
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabel {
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutboxLabels {
    kind: String,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunnerLabel {
    status: &'static str,
}

/// What became of one attempt at an outbox row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutboxResult {
    Delivered,
    Retry,
    GivenUp,
}

impl OutboxResult {
    fn as_str(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retry => "retry",
            Self::GivenUp => "given_up",
        }
    }
}

/// Histogram buckets in seconds: `start`, then doubling, `count` of them (and `+Inf`).
#[derive(Debug, Clone, Copy)]
struct Doubling {
    start: f64,
    count: u16,
}

impl MetricConstructor<Histogram> for Doubling {
    fn new_metric(&self) -> Histogram {
        Histogram::new(exponential_buckets(self.start, 2.0, self.count))
    }
}

/// Seconds from `t` to `now`; zero when the clock went backwards.
fn seconds_since(t: DateTime<Utc>, now: DateTime<Utc>) -> f64 {
    (now - t).to_std().unwrap_or_default().as_secs_f64()
}

/// A histogram per label set, all with the same buckets.
type Histograms<L> = Family<L, Histogram, Doubling>;

fn doubling(start: f64, count: u16) -> Doubling {
    Doubling { start, count }
}

/// This process's metrics and the registry `/metrics` encodes.
pub struct Metrics {
    registry: Registry,
    github_api_errors: Counter,
    webhook_deliveries: Family<OutcomeLabel, Counter>,
    webhook_duration: Histogram,
    job_duration: Histograms<JobLabels>,
    leases_expired: Family<StateLabel, Counter>,
    outbox_attempt_duration: Histograms<OutboxLabels>,
    outbox_delivery_delay: Histograms<KindLabel>,
    analysis_duration: Histogram,
    queue_jobs: Family<StateLabel, Gauge>,
    running_job_age_max: Gauge<f64, AtomicU64>,
    outbox_backlog: Gauge,
    runners: Family<RunnerLabel, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Every metric registered, at zero.
    pub fn new() -> Self {
        let mut m = Metrics {
            registry: Registry::default(),
            github_api_errors: Counter::default(),
            webhook_deliveries: Family::default(),
            // GitHub gives up on a delivery after 10 s.
            webhook_duration: doubling(0.001, 14).new_metric(),
            // Benchmark jobs run for seconds to hours.
            job_duration: Family::new_with_constructor(doubling(1.0, 15)),
            leases_expired: Family::default(),
            // One GitHub call or a few; the client times out at 30 s.
            outbox_attempt_duration: Family::new_with_constructor(doubling(0.01, 12)),
            // Retries back off up to 15 minutes between attempts.
            outbox_delivery_delay: Family::new_with_constructor(doubling(0.1, 16)),
            analysis_duration: doubling(0.001, 14).new_metric(),
            queue_jobs: Family::default(),
            running_job_age_max: Gauge::default(),
            outbox_backlog: Gauge::default(),
            runners: Family::default(),
        };
        // Series that exist before their first event, so a dashboard shows 0 rather than nothing.
        for kind in [JobKind::Comparison, JobKind::Calibration] {
            for succeeded in [true, false] {
                drop(
                    m.job_duration
                        .get_or_create(&JobLabels::new(kind, succeeded)),
                );
            }
        }
        for state in [JobState::Queued, JobState::Failed] {
            drop(m.leases_expired.get_or_create(&StateLabel {
                state: state.as_str(),
            }));
        }
        let r = &mut m.registry;
        r.register(
            "benchgate_queue_jobs",
            "Jobs in the queue by state (read from the database at scrape time)",
            m.queue_jobs.clone(),
        );
        r.register(
            "benchgate_running_job_age_seconds_max",
            "Seconds since the longest-running active job was first claimed",
            m.running_job_age_max.clone(),
        );
        r.register(
            "benchgate_outbox_backlog",
            "GitHub writes recorded and not yet delivered (read from the database at scrape time)",
            m.outbox_backlog.clone(),
        );
        r.register(
            "benchgate_runners",
            "Registered runners by status, as the dashboard shows them",
            m.runners.clone(),
        );
        r.register_with_unit(
            "benchgate_job_duration",
            "Jobs an agent completed, from first claim to completion, by kind and outcome",
            Unit::Seconds,
            m.job_duration.clone(),
        );
        r.register(
            "benchgate_job_leases_expired",
            "Job leases the reaper found expired, by what became of the job (queued again or failed)",
            m.leases_expired.clone(),
        );
        r.register(
            "benchgate_webhook_deliveries",
            "Webhook deliveries answered by this process, by what the server made of them",
            m.webhook_deliveries.clone(),
        );
        r.register_with_unit(
            "benchgate_webhook_duration",
            "Time to verify, plan and record one webhook delivery",
            Unit::Seconds,
            m.webhook_duration.clone(),
        );
        r.register_with_unit(
            "benchgate_outbox_attempt_duration",
            "Time of one attempt at an outbox row (its GitHub calls), by kind and result",
            Unit::Seconds,
            m.outbox_attempt_duration.clone(),
        );
        r.register_with_unit(
            "benchgate_outbox_delivery_delay",
            "Time from recording an outbox row to delivering it, retries included, by kind",
            Unit::Seconds,
            m.outbox_delivery_delay.clone(),
        );
        r.register(
            "benchgate_github_api_errors",
            "GitHub API calls that failed (an error status, no answer, or an unreadable one)",
            m.github_api_errors.clone(),
        );
        r.register_with_unit(
            "benchgate_analysis_duration",
            "Time to analyse a comparison after an upload or a completed job",
            Unit::Seconds,
            m.analysis_duration.clone(),
        );
        m
    }

    /// A GitHub call failed (its status is in the log line of whoever made it).
    pub fn github_api_error(&self) {
        self.github_api_errors.inc();
    }

    /// A webhook delivery was answered; `took` is `None` when it was refused before being read.
    pub fn webhook(&self, outcome: &'static str, took: Option<Duration>) {
        self.webhook_deliveries
            .get_or_create(&OutcomeLabel { outcome })
            .inc();
        if let Some(took) = took {
            self.webhook_duration.observe(took.as_secs_f64());
        }
    }

    /// An agent completed a job that was first claimed at `started_at`.
    pub fn job_finished(&self, kind: JobKind, succeeded: bool, started_at: Option<DateTime<Utc>>) {
        let Some(started_at) = started_at else { return };
        self.job_duration
            .get_or_create(&JobLabels::new(kind, succeeded))
            .observe(seconds_since(started_at, Utc::now()));
    }

    /// The reaper found a job's lease expired; `now` is the job's state after reaping.
    pub fn lease_expired(&self, now: JobState) {
        self.leases_expired
            .get_or_create(&StateLabel {
                state: now.as_str(),
            })
            .inc();
    }

    /// One attempt at an outbox row of `kind` (recorded at `recorded_at`) ended.
    pub fn outbox_attempt(
        &self,
        kind: &str,
        result: OutboxResult,
        took: Duration,
        recorded_at: DateTime<Utc>,
    ) {
        let labels = OutboxLabels {
            kind: kind.to_owned(),
            result: result.as_str(),
        };
        self.outbox_attempt_duration
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        if result == OutboxResult::Delivered {
            self.outbox_delivery_delay
                .get_or_create(&KindLabel {
                    kind: kind.to_owned(),
                })
                .observe(seconds_since(recorded_at, Utc::now()));
        }
    }

    /// A comparison was analysed.
    pub fn analysed(&self, took: Duration) {
        self.analysis_duration.observe(took.as_secs_f64());
    }

    /// Reads the database-backed gauges, then encodes everything.
    pub async fn render(&self, store: &dyn Store) -> Result<String, StoreError> {
        let depth = store.queue_depth().await?;
        for (state, n) in [("queued", depth.queued), ("running", depth.running)] {
            self.queue_jobs.get_or_create(&StateLabel { state }).set(n);
        }
        let now = Utc::now();
        let active = store.active_jobs().await?;
        let oldest_running = active
            .iter()
            // A requeued job keeps its first start time; only a job running now is counted.
            .filter(|j| j.state == JobState::Running)
            .filter_map(|j| j.started_at)
            .map(|t| seconds_since(t, now))
            .fold(0.0, f64::max);
        self.running_job_age_max.set(oldest_running);
        self.outbox_backlog.set(store.outbox_backlog().await?);
        let statuses: Vec<RunnerStatus> = store
            .list_runners()
            .await?
            .iter()
            .map(|r| RunnerStatus::of(r, running_job(r, &active), now))
            .collect();
        for status in RunnerStatus::ALL {
            let n = statuses.iter().filter(|s| **s == status).count();
            self.runners
                .get_or_create(&RunnerLabel {
                    status: status.as_str(),
                })
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(m: &Metrics) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &m.registry).unwrap();
        out
    }

    #[test]
    fn a_finished_job_is_one_observation_in_its_kind_and_outcome() {
        let m = Metrics::new();
        let started = Utc::now() - chrono::Duration::seconds(90);
        m.job_finished(JobKind::Comparison, true, Some(started));
        let text = encoded(&m);
        for needle in [
            "# TYPE benchgate_job_duration_seconds histogram",
            "# UNIT benchgate_job_duration_seconds seconds",
            "benchgate_job_duration_seconds_count{kind=\"comparison\",outcome=\"succeeded\"} 1",
            "benchgate_job_duration_seconds_bucket{le=\"64.0\",kind=\"comparison\",outcome=\"succeeded\"} 0",
            "benchgate_job_duration_seconds_bucket{le=\"128.0\",kind=\"comparison\",outcome=\"succeeded\"} 1",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn job_and_lease_series_exist_before_their_first_event() {
        let text = encoded(&Metrics::new());
        for needle in [
            "benchgate_job_duration_seconds_count{kind=\"calibration\",outcome=\"failed\"} 0",
            "benchgate_job_leases_expired_total{state=\"queued\"} 0",
            "benchgate_github_api_errors_total 0",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
    }
}
