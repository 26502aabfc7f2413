//! The agent protocol: JSON over HTTP under `/api/v1`, bearer runner token, and the admin
//! API's comparison request. Every write from an agent names its lease token; a writer whose
//! lease is gone gets `409 Conflict` and stops.
//!
//! | call | request | answer |
//! |---|---|---|
//! | `POST /api/v1/jobs/claim` | [`ClaimRequest`] | `200` [`ClaimedJob`] or `204` (nothing within `wait_secs`) |
//! | `POST /api/v1/jobs/{id}/heartbeat` | [`HeartbeatRequest`] | [`HeartbeatResponse`] / `409` |
//! | `POST /api/v1/jobs/{id}/rounds` | [`RoundUpload`] | [`UploadReceipt`] / `409` |
//! | `POST /api/v1/jobs/{id}/complete` | [`CompleteRequest`] | `204` / `409` |
//! | `POST /api/v1/jobs/{id}/release` | [`ReleaseRequest`] | `204` / `409` |
//! | `PUT /api/v1/runners/me/fingerprint` | [`FingerprintRequest`] | `204` |
//! | `POST /api/v1/comparisons` (admin token) | [`CreateComparisonRequest`] | `201` [`CreatedComparison`] |
//! | `GET /api/v1/comparisons/{id}` (admin token) | — | [`ComparisonStatus`] |
//!
//! A wrong or revoked runner token gets `401`.
//!
//! The suite's configuration a claimed job carries is [`crate::suite`]; what a stored
//! comparison was made for is [`crate::context`]. Both are re-exported here, where the
//! protocol's users have always found them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use crate::context::*;
pub use crate::suite::*;
use crate::{AnalysisReport, Measurement, Side};

/// Ask for the next job; the server holds the request up to `wait_secs` (capped at ~25 s).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimRequest {
    /// Only jobs for these labels (a subset of the runner's registered labels); empty = all of them.
    #[serde(default)]
    pub labels: Vec<String>,
    /// How long the server may wait for a job before answering `204`; `None` = server default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_secs: Option<u64>,
}

/// What a job measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// Rounds of an A/B comparison of `base_sha` and `head_sha`.
    Comparison,
    /// An A/A session: `base_sha == head_sha`; its samples give this runner's noise floor.
    Calibration,
}

/// The repository to check out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepositorySpec {
    /// `owner/name`, or the URL/path itself.
    pub name: String,
    /// Anything `git clone` accepts: a URL or a local path.
    pub clone_url: String,
}

/// Both sides built to the same bytes: every file `artifacts` names, on each side, has the same
/// path and content. Nothing that runs differs, so nothing is measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdenticalBuild {
    /// The files compared, relative to a work tree, sorted.
    pub files: Vec<String>,
    /// Their total size.
    pub bytes: u64,
    /// SHA-256 over the sorted `path NUL file-sha256` lines: one digest for the whole build.
    pub sha256: String,
}

impl IdenticalBuild {
    /// "identical build: 2 files (4.1 MiB) byte-identical on both sides (sha256 3f2a…)".
    pub fn describe(&self) -> String {
        let files = match self.files.as_slice() {
            [one] => one.clone(),
            many => format!("{} files", many.len()),
        };
        format!(
            "identical build: {files} ({:.1} MiB) byte-identical on both sides (sha256 {}); nothing \
             that runs differs, so nothing was measured",
            self.bytes as f64 / (1024.0 * 1024.0),
            &self.sha256[..self.sha256.len().min(12)]
        )
    }
}

/// A job just claimed, under a lease the agent keeps alive with heartbeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimedJob {
    /// The job's id (the `{id}` of later calls).
    pub job_id: i64,
    /// Which claim of this job this is (1 for the first); uploads carry it.
    pub attempt: i64,
    /// Proof of holding the lease; every later call names it. Secret: never log it.
    pub lease_token: String,
    /// The lease ends then unless a heartbeat extends it.
    pub lease_expires_at: DateTime<Utc>,
    /// A/B comparison or A/A calibration.
    pub kind: JobKind,
    /// Where the code is.
    pub repository: RepositorySpec,
    /// The base side's commit.
    pub base_sha: String,
    /// The head side's commit (equal to `base_sha` for calibration).
    pub head_sha: String,
    /// What to build and run, and how many rounds.
    pub benchmark: BenchmarkSpec,
    /// Send a heartbeat at least this often.
    pub heartbeat_secs: u64,
    /// Set on a profile job: instead of measured rounds, run each side under a sampling
    /// profiler and upload the stacks (`POST /api/v1/jobs/{id}/profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileRequest>,
    /// Environment each side gets beyond the suite's (a canary's planted work, a layout
    /// session's salts); absent when the sides differ only in their commits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sides: Option<SideEnvs>,
    /// End the job (succeeded) once an upload's receipt says the gate has its answer: set for
    /// a pull request's or a canary's comparison that was undecided when claimed, so
    /// `/rebench` on a decided comparison still runs the rounds it asked for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stop_when_decided: bool,
}

/// Profiled runs of both sides after a verdict. The profiler changes timings, so these runs are
/// never samples of the comparison: they only say where the time went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileRequest {
    /// Runs of each side under the profiler; their stacks are merged per side.
    pub runs: u32,
    /// The rows it explains (`benchmark metric`), for the report; the run command is profiled
    /// whole, every benchmark it runs included.
    #[serde(default)]
    pub rows: Vec<String>,
    /// `verdict` (asked by a slower verdict) or the login of who commented `/benchgate profile`.
    pub requested_by: String,
}

/// Largest folded-stacks text per side the server stores; the agent caps below it
/// (`benchgate_profile::Limits::default()`, 256 KiB) and the server refuses more.
pub const PROFILE_SIDE_LIMIT: usize = 512 * 1024;

/// What a profile job produced, uploaded once before the job completes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileUpload {
    /// The lease held.
    pub lease_token: String,
    /// The sampled event (`cycles`, or `cpu-clock` where hardware counters are absent);
    /// `None` when no profiler could run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Why nothing was profiled, one line for the PR comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Profiled runs per side.
    pub runs: u32,
    /// Base's folded stacks (`a;b;c 12` per line).
    #[serde(default)]
    pub base: String,
    /// Head's folded stacks.
    #[serde(default)]
    pub head: String,
}

/// Keep the lease alive and learn whether the job was cancelled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatRequest {
    /// The lease held.
    pub lease_token: String,
    /// Measured rounds uploaded so far (for progress display).
    #[serde(default)]
    pub rounds_done: u32,
}

/// The extended lease; `cancelled` means stop after the current round and complete the job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatResponse {
    /// The new end of the lease.
    pub lease_expires_at: DateTime<Utc>,
    /// A newer head or a closed PR cancelled the job.
    pub cancelled: bool,
}

/// One value of one side in an uploaded round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UploadedSample {
    /// Which build produced it.
    pub side: Side,
    /// 0 when this side ran first in the round, 1 when second.
    pub position: i64,
    /// The value.
    pub measurement: Measurement,
}

/// One finished measured round (warm-ups are not uploaded); idempotent on
/// (job, attempt, round, side, benchmark, metric), fenced by the lease.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundUpload {
    /// The lease held.
    pub lease_token: String,
    /// The claim's `attempt`.
    pub attempt: i64,
    /// 0-based index of the measured round.
    pub round: i64,
    /// Whether base ran first (positions say the same per sample).
    pub base_first: bool,
    /// Every value of both sides.
    pub samples: Vec<UploadedSample>,
}

/// What an upload stored: re-sent values count as duplicates and keep their first value.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UploadReceipt {
    /// Values newly stored.
    pub inserted: u64,
    /// Values already stored by an earlier identical upload.
    pub duplicates: u64,
    /// With this round the comparison's gate has its answer on this runner (passes or fails):
    /// an agent told `stop_when_decided` ends the job.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decided: bool,
    /// The benchmarks whose gated rows are still undecided on this runner, when some others
    /// are decided: a run command holding `{benchmarks}` runs only these from the next round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undecided: Option<Vec<String>>,
}

/// How the agent ended a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum JobOutcome {
    /// Every round ran and was uploaded (or the job was cancelled and stopped cleanly).
    Succeeded {
        /// The end of the agent's log, for the record.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        log_tail: Option<String>,
    },
    /// The build or a run failed.
    Failed {
        /// One line saying what failed.
        reason: String,
        /// The end of the failing command's output.
        #[serde(default)]
        log_tail: String,
    },
    /// Both sides built to byte-identical `artifacts`: no round ran, and none is needed.
    IdenticalBuild { build: IdenticalBuild },
    /// The runner could not finish it for a cause of its own (its work dir was full): the
    /// attempt is used and the job queued again, failed once out of attempts.
    Interrupted {
        /// One line saying what stopped it.
        reason: String,
        #[serde(default)]
        log_tail: String,
    },
}

/// What a failure says when the machine, not the code, ran out of disk.
pub const DISK_FULL: &str = "No space left on device";

/// End a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteRequest {
    /// The lease held.
    pub lease_token: String,
    /// Succeeded or failed with a reason.
    pub outcome: JobOutcome,
}

/// Give a job back to the queue without using up an attempt (agent shutting down).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseRequest {
    /// The lease held.
    pub lease_token: String,
}

/// The runner's machine fingerprint (CPU, cores, kernel, governor…), stored with the runner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FingerprintRequest {
    /// This machine, as the harness reads it, with the agent's isolation.
    pub fingerprint: crate::MachineFingerprint,
}

/// Request a comparison of two revisions without GitHub (tests, scripts, the demo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateComparisonRequest {
    /// A clone URL or a local path.
    pub repository: String,
    /// Base revision: a sha, or a ref the server resolves with `git rev-parse` for a local path.
    pub base: String,
    /// Head revision, like `base`.
    pub head: String,
    /// Which runners run it.
    pub runner_label: String,
    /// What to build and run; `benchmark.rounds` is the number of rounds.
    pub config: ComparisonConfig,
    /// Split the rounds into this many jobs (so several runners can share them); default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<u32>,
}

/// A comparison just requested.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreatedComparison {
    /// Its id (for `GET /api/v1/comparisons/{id}`).
    pub id: i64,
    /// The resolved base sha.
    pub base_sha: String,
    /// The resolved head sha.
    pub head_sha: String,
    /// Ids of the jobs enqueued.
    pub jobs: Vec<i64>,
    /// Rounds planned from the runner's noise floor (n*), when a floor was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_rounds: Option<i64>,
}

/// One runner's results for a comparison, in `benchgate analyze --json`'s shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunnerReport {
    /// The runner's name.
    pub runner: String,
    /// Whether this runner's series is the comparison's headline (most complete pairs).
    pub headline: bool,
    /// Per benchmark and metric.
    pub report: AnalysisReport,
}

/// A comparison's state and results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonStatus {
    /// Its id.
    pub id: i64,
    /// `queued`, `running`, `done`, `failed`, `superseded` or `cancelled`.
    pub state: String,
    /// The repository's name.
    pub repository: String,
    /// Base sha.
    pub base_sha: String,
    /// Head sha.
    pub head_sha: String,
    /// Runner label.
    pub runner_label: String,
    /// n* planned from the floor before any A/B data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_rounds: Option<i64>,
    /// Results per runner, headline first; samples of two runners are never pooled.
    pub runners: Vec<RunnerReport>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_is_tagged_by_status() {
        let json = serde_json::to_value(JobOutcome::Failed {
            reason: "build failed".into(),
            log_tail: "error[E0425]".into(),
        })
        .unwrap();
        assert_eq!(json["status"], "failed");
        let back: JobOutcome = serde_json::from_str(r#"{"status":"succeeded"}"#).unwrap();
        assert_eq!(back, JobOutcome::Succeeded { log_tail: None });
    }
}
