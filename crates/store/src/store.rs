//! The persistence contract in the domain's words. One contract test suite
//! (tests/, one binary) runs against every implementation.

use crate::error::{Readiness, StoreError};
use crate::model::*;
use benchgate_api::BenchmarkResult;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// Everything benchgate keeps, one trait per area so that each area's implementation sits in
/// the file that holds its SQL (`src/queries/<area>.rs`, or each backend's `dialect.rs` for
/// claims). Object-safe: used as `Arc<dyn Store>`; the areas' methods are callable on it
/// without importing their traits.
#[async_trait::async_trait]
pub trait Store:
    RepositoryStore
    + RunnerStore
    + ComparisonStore
    + PullRequestStore
    + ResultStore
    + ProfileStore
    + QueueStore
    + ClaimStore
    + SampleStore
    + FloorStore
    + AuditStore
    + WebhookStore
    + OutboxStore
    + GitHubAppStore
    + AcceptanceStore
    + MainHistoryStore
    + BisectionStore
    + Send
    + Sync
    + 'static
{
    /// `"sqlite"` or `"postgres"`.
    fn backend(&self) -> &'static str;
    /// Applies pending migrations.
    async fn migrate(&self) -> Result<(), StoreError>;
    /// Checks the connection and that every known migration is applied.
    async fn readiness(&self) -> Readiness;
}

/// Installations and repositories.
#[async_trait::async_trait]
pub trait RepositoryStore: Send + Sync {
    /// Records (or renames) a GitHub App installation.
    async fn upsert_installation(&self, installation: &Installation) -> Result<(), StoreError>;
    /// Marks an installation and its repositories removed (the app was uninstalled).
    async fn remove_installation(&self, installation_id: i64) -> Result<(), StoreError>;
    /// Inserts or updates a repository, keyed by GitHub id when it has one, else by full name.
    async fn upsert_repository(&self, repo: &NewRepository) -> Result<Repository, StoreError>;
    /// A repository by id.
    async fn repository(&self, id: RepositoryId) -> Result<Option<Repository>, StoreError>;
    /// A repository by `owner/name` (or URL/path).
    async fn repository_by_name(&self, full_name: &str) -> Result<Option<Repository>, StoreError>;
}

/// Runners and their tokens.
#[async_trait::async_trait]
pub trait RunnerStore: Send + Sync {
    /// Registers a runner; the returned token is shown once and only its SHA-256 is kept.
    /// A name already taken is `Conflict`.
    async fn add_runner(&self, name: &str, labels: &[String]) -> Result<NewRunner, StoreError>;
    /// All runners, revoked ones included, by name.
    async fn list_runners(&self) -> Result<Vec<Runner>, StoreError>;
    /// A runner by id.
    async fn runner(&self, id: RunnerId) -> Result<Option<Runner>, StoreError>;
    /// A runner by name.
    async fn runner_by_name(&self, name: &str) -> Result<Option<Runner>, StoreError>;
    /// Starts the runner's audit flag afresh from `at` (it was recalibrated by hand).
    async fn reset_runner_audit(
        &self,
        runner_id: RunnerId,
        at: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), StoreError>;
    /// Revokes a runner's token; `NotFound` when no runner has that name.
    async fn revoke_runner(&self, name: &str) -> Result<(), StoreError>;
    /// The unrevoked runner holding this bearer token, if any (hashes compared in constant time).
    async fn authenticate_runner(&self, token: &str) -> Result<Option<Runner>, StoreError>;
    /// Records that the runner was seen now, and its fingerprint when it sent one.
    async fn touch_runner(
        &self,
        id: RunnerId,
        fingerprint: Option<&benchgate_api::MachineFingerprint>,
    ) -> Result<(), StoreError>;
}

/// Comparisons: created with their jobs, found, given more rounds, cancelled.
#[async_trait::async_trait]
pub trait ComparisonStore: Send + Sync {
    /// Creates a comparison and its jobs in one transaction; for a PR, supersedes the active
    /// comparisons of other heads of the same PR and runner label.
    async fn create_comparison(&self, new: &NewComparison)
    -> Result<CreatedComparison, StoreError>;
    /// A comparison by id.
    async fn comparison(&self, id: ComparisonId) -> Result<Option<Comparison>, StoreError>;
    /// The newest comparisons first.
    async fn recent_comparisons(&self, limit: i64) -> Result<Vec<Comparison>, StoreError>;
    /// The newest comparisons that match `filter`, at most `limit`.
    async fn find_comparisons(
        &self,
        filter: &ComparisonFilter,
        limit: i64,
    ) -> Result<Vec<Comparison>, StoreError>;
    /// Adds jobs (more rounds) to a comparison; `Conflict` when it was superseded or cancelled.
    async fn add_rounds(
        &self,
        comparison_id: ComparisonId,
        jobs: &[NewJob],
    ) -> Result<Vec<JobId>, StoreError>;
    /// The PR was closed: cancels its active comparisons; queued jobs are cancelled, running
    /// ones asked to stop. Returns how many jobs were affected.
    async fn cancel_pull_request(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
    ) -> Result<u64, StoreError>;
    /// Cancels one active comparison (a merge group left the queue or ran out of time): queued
    /// jobs are cancelled, running ones asked to stop. Returns how many jobs were affected.
    async fn cancel_comparison(&self, comparison_id: ComparisonId) -> Result<u64, StoreError>;
}

/// What a comparison knows of its pull request: heads, check runs, the comment.
#[async_trait::async_trait]
pub trait PullRequestStore: Send + Sync {
    /// A PR's comparisons, newest first.
    async fn pull_request_comparisons(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
    ) -> Result<Vec<Comparison>, StoreError>;
    /// Remembers the check run written for a comparison; a record of an older generation than
    /// the stored one changes nothing.
    async fn record_check_run(
        &self,
        comparison_id: ComparisonId,
        run: CheckRunRecord,
    ) -> Result<(), StoreError>;
    /// Applies `edit` to the PR context stored with comparison `id` (its description, its
    /// comment claims): the context after it, or `None` when the comparison has no PR context
    /// or the edit changed nothing. `NotFound` for an unknown comparison.
    async fn edit_pull_request_context(
        &self,
        id: ComparisonId,
        edit: &PullRequestEdit,
    ) -> Result<Option<benchgate_api::agent::PullRequestContext>, StoreError>;
    /// The comparisons of one head commit in a repository, newest first (a re-run of a fork
    /// PR's check names only the sha).
    async fn head_comparisons(
        &self,
        repository_id: RepositoryId,
        head_sha: &str,
    ) -> Result<Vec<Comparison>, StoreError>;
    /// The newest head GitHub announced for a PR, if any webhook recorded one.
    async fn pull_request_head(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
    ) -> Result<Option<PullRequestHead>, StoreError>;
    /// The one comment benchgate keeps on a PR for a runner label, if posted.
    async fn pull_request_comment_id(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
        runner_label: &str,
    ) -> Result<Option<i64>, StoreError>;
    /// Remembers that comment's id.
    async fn set_pull_request_comment_id(
        &self,
        repository_id: RepositoryId,
        pr_number: i64,
        runner_label: &str,
        comment_id: i64,
    ) -> Result<(), StoreError>;
}

/// A comparison's analysed results.
#[async_trait::async_trait]
pub trait ResultStore: Send + Sync {
    /// Stores the computed results of a comparison on one runner, replacing that runner's
    /// whole earlier set, so pages read them instead of recomputing. `basis` is how many
    /// samples the set was computed from: a set with a smaller basis than the stored one is an
    /// older view (another replica's analysis finished later) and is dropped, returning `false`.
    async fn replace_comparison_results(
        &self,
        comparison_id: ComparisonId,
        runner_id: RunnerId,
        basis: i64,
        results: &[BenchmarkResult],
    ) -> Result<bool, StoreError>;
    /// The stored results of a comparison, by runner, benchmark, metric.
    async fn comparison_results(
        &self,
        comparison_id: ComparisonId,
    ) -> Result<Vec<StoredResult>, StoreError>;
}

/// Profile jobs and their stacks.
#[async_trait::async_trait]
pub trait ProfileStore: Send + Sync {
    /// Adds a profile job to a comparison: profiled runs of both sides, which add no round and
    /// leave its state alone. `None` when `job.origin` was added before; `Conflict` when the
    /// comparison was superseded or cancelled.
    async fn request_profile(
        &self,
        comparison_id: ComparisonId,
        job: &NewProfileJob,
    ) -> Result<Option<JobId>, StoreError>;
    /// Stores a profile job's stacks under its lease (`LeaseLost` otherwise; `Conflict` for a
    /// measuring job) and writes the comparison's report rows.
    async fn record_profile(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        profile: &NewProfile,
    ) -> Result<(), StoreError>;
    /// A comparison's stored profiles, newest first.
    async fn comparison_profiles(
        &self,
        comparison_id: ComparisonId,
    ) -> Result<Vec<StoredProfile>, StoreError>;
}

/// The job queue: calibrations, leases, completion, the reaper.
#[async_trait::async_trait]
pub trait QueueStore: Send + Sync {
    /// Enqueues an A/A calibration job pinned to one runner.
    async fn enqueue_calibration(&self, new: &NewCalibration) -> Result<JobId, StoreError>;
    /// Enqueues `new` only when the runner has no calibration on the repository that did not
    /// fail created at `since` or later (ever, for `None`); `None` when it has one. Safe under
    /// concurrent callers on any replica.
    async fn enqueue_calibration_unless_since(
        &self,
        new: &NewCalibration,
        since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<Option<JobId>, StoreError>;
    /// When the newest calibration job for (runner, repository) that did not fail was created.
    async fn latest_calibration(
        &self,
        runner_id: RunnerId,
        repository_id: RepositoryId,
    ) -> Result<Option<DateTime<Utc>>, StoreError>;
    /// Extends the lease to `lease` from now and says whether the job was cancelled;
    /// `LeaseLost` when the lease is no longer held.
    async fn heartbeat(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        extend: Duration,
    ) -> Result<Heartbeat, StoreError>;
    /// Ends a job. Repeating the same call is harmless; `LeaseLost` when the lease is gone.
    async fn complete_job(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        outcome: &JobOutcome,
    ) -> Result<(), StoreError>;
    /// Succeeded calibration jobs finished after `finished_after` that have no A/A session
    /// recorded, newest first (their session was lost to a crash or error after completion).
    async fn calibrations_without_session(
        &self,
        finished_after: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<Job>, StoreError>;
    /// A runner's succeeded calibration jobs of a repository that finished before `before`,
    /// newest first, at most `limit`.
    async fn finished_calibrations(
        &self,
        runner_id: RunnerId,
        repository_id: RepositoryId,
        before: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<Job>, StoreError>;
    /// Gives a job back to the queue (agent shutting down) without using up an attempt.
    async fn release_job(&self, job_id: JobId, lease: &LeaseToken) -> Result<(), StoreError>;
    /// Requeues running jobs whose lease expired before `now`; a job out of attempts fails with
    /// the reason, a cancelled one ends cancelled.
    async fn reap_expired_leases(&self, now: DateTime<Utc>) -> Result<Vec<ReapedJob>, StoreError>;
    /// A job by id.
    async fn job(&self, id: JobId) -> Result<Option<Job>, StoreError>;
    /// A comparison's jobs, oldest first.
    async fn comparison_jobs(&self, comparison_id: ComparisonId) -> Result<Vec<Job>, StoreError>;
    /// Queued and running jobs, in claim order (running first).
    async fn active_jobs(&self) -> Result<Vec<Job>, StoreError>;
    /// How many jobs are queued and running.
    async fn queue_depth(&self) -> Result<QueueDepth, StoreError>;
    /// Where comparison `id` waits: its next job in claim order and the jobs a runner of that
    /// job's label claims before it. `None` while a job of it runs, or when none is queued.
    async fn queue_place(&self, id: ComparisonId) -> Result<Option<QueuePlace>, StoreError>;
    /// When each round of each attempt of a job first landed, by attempt and round.
    async fn round_landings(&self, job_id: JobId) -> Result<Vec<RoundLanding>, StoreError>;
    /// The newest jobs of `kind` of a repository on a runner label that finished done, newest
    /// first, at most `limit`: what a job's pace is foretold from before it ran.
    async fn finished_jobs(
        &self,
        repository_id: RepositoryId,
        runner_label: &str,
        kind: JobKind,
        limit: i64,
    ) -> Result<Vec<Job>, StoreError>;
}

/// Claims of jobs and outbox rows: the one place each backend writes its own SQL.
#[async_trait::async_trait]
pub trait ClaimStore: Send + Sync {
    /// Claims the next queued job for one of `labels` (highest priority, then oldest), under a
    /// lease of `lease` from now; `None` when nothing waits. Each job is claimed by one caller.
    async fn claim_job(
        &self,
        runner_id: RunnerId,
        labels: &[String],
        lease: Duration,
    ) -> Result<Option<ClaimedJob>, StoreError>;
    /// Leases up to `limit` due rows, oldest due first; rows leased by another worker are
    /// skipped until their lease expires.
    async fn claim_outbox(
        &self,
        limit: i64,
        lease: Duration,
    ) -> Result<Vec<OutboxMessage>, StoreError>;
}

/// Samples, uploaded a round at a time.
#[async_trait::async_trait]
pub trait SampleStore: Send + Sync {
    /// Stores one finished round, fenced by the lease (`LeaseLost` when it is gone) and
    /// idempotent on (job, attempt, round, side, benchmark, metric).
    async fn upload_round(
        &self,
        job_id: JobId,
        lease: &LeaseToken,
        upload: &RoundUpload,
    ) -> Result<UploadReceipt, StoreError>;
    /// A comparison's samples, one series per runner (never pooled).
    async fn comparison_samples(
        &self,
        comparison_id: ComparisonId,
    ) -> Result<Vec<RunnerSeries>, StoreError>;
    /// The samples of a comparison's uploads after `seen`, for readers that keep what they
    /// read (the analysis after each upload): a reader never misses an upload, because a
    /// job's uploads are numbered in commit order.
    async fn comparison_samples_since(
        &self,
        comparison_id: ComparisonId,
        seen: &UploadMarks,
    ) -> Result<SamplesSince, StoreError>;
    /// One job's samples (e.g. an A/A session), one series per runner.
    async fn job_samples(&self, job_id: JobId) -> Result<Vec<RunnerSeries>, StoreError>;
}

/// A/A sessions and the noise floors made from them.
#[async_trait::async_trait]
pub trait FloorStore: Send + Sync {
    /// Records an A/A session's summary (replacing an earlier record of the same job).
    async fn record_aa_session(&self, session: &AaSession) -> Result<(), StoreError>;
    /// All sessions of a floor, oldest first, to recompute it.
    async fn aa_sessions(&self, key: &FloorKey) -> Result<Vec<AaSession>, StoreError>;
    /// Makes `floor` the current floor of its key and appends it to the history, atomically.
    async fn update_noise_floor(&self, floor: &NoiseFloor) -> Result<(), StoreError>;
    /// The current floor of a key.
    async fn noise_floor(&self, key: &FloorKey) -> Result<Option<NoiseFloor>, StoreError>;
    /// Every current floor of a runner, by repository, benchmark, metric.
    async fn runner_noise_floors(&self, runner_id: RunnerId)
    -> Result<Vec<NoiseFloor>, StoreError>;
    /// Every floor ever computed for a key, oldest first.
    async fn noise_floor_history(&self, key: &FloorKey) -> Result<Vec<NoiseFloor>, StoreError>;
}

/// The audit: canary results and forecasts.
#[async_trait::async_trait]
pub trait AuditStore: Send + Sync {
    /// Records (or replaces) what a canary's rounds said for one benchmark and metric.
    async fn record_canary_result(&self, result: &CanaryResult) -> Result<(), StoreError>;
    /// Every canary result of a runner, oldest first.
    async fn canary_results(&self, runner_id: RunnerId) -> Result<Vec<CanaryResult>, StoreError>;
    /// Done canary comparisons updated since `since` that have no result yet (the server
    /// stopped between the last round and scoring it), oldest first.
    async fn unscored_canaries(
        &self,
        since: chrono::DateTime<chrono::Utc>,
        limit: i64,
    ) -> Result<Vec<Comparison>, StoreError>;
    /// A runner's canary comparisons, newest first.
    async fn runner_canaries(
        &self,
        runner_id: RunnerId,
        limit: i64,
    ) -> Result<Vec<Comparison>, StoreError>;
    /// Records forecasts; one already stored for the same row and round count stays.
    async fn record_forecasts(&self, forecasts: &[Forecast]) -> Result<(), StoreError>;
    /// Each entry's row reached a verdict at `decided_rounds`: settles its open forecasts made
    /// at fewer rounds. Returns how many were settled.
    async fn settle_forecasts(&self, decided: &[Forecast]) -> Result<u64, StoreError>;
    /// Every forecast made for a runner's rows, oldest first.
    async fn runner_forecasts(&self, runner_id: RunnerId) -> Result<Vec<Forecast>, StoreError>;
}

/// Webhook deliveries, de-duplicated and recorded with their effects.
#[async_trait::async_trait]
pub trait WebhookStore: Send + Sync {
    /// Records a delivery and applies its effects in one transaction; `Duplicate` (and nothing
    /// done) when the delivery id was seen before.
    async fn record_delivery(
        &self,
        delivery: &Delivery,
        effects: &[DeliveryEffect],
    ) -> Result<DeliveryRecord, StoreError>;
}

/// The outbox: GitHub writes and follow-up work, retried until done.
#[async_trait::async_trait]
pub trait OutboxStore: Send + Sync {
    /// Records a GitHub write to deliver (or replaces the payload of a pending one with the
    /// same dedupe key).
    async fn enqueue_outbox(&self, message: &NewOutboxMessage) -> Result<OutboxId, StoreError>;
    /// The write succeeded. If the payload was replaced meanwhile, the row stays pending so the
    /// newer payload is sent too. `LeaseLost` when the lease is gone.
    async fn outbox_delivered(&self, id: OutboxId, lease: &LeaseToken) -> Result<(), StoreError>;
    /// The write failed: try again at `retry_at` (backoff chosen by the caller), or give up
    /// when `None`. `LeaseLost` when the lease is gone.
    async fn outbox_failed(
        &self,
        id: OutboxId,
        lease: &LeaseToken,
        error: &str,
        retry_at: Option<DateTime<Utc>>,
    ) -> Result<(), StoreError>;
    /// Gives back rows leased under `lease` that were not carried out (a worker stopping
    /// mid-batch): due at once, no attempt used up. Rows no longer under `lease` are left
    /// alone. Returns how many were released.
    async fn release_outbox(&self, ids: &[OutboxId], lease: &LeaseToken)
    -> Result<u64, StoreError>;
    /// Rows not yet delivered (nor given up).
    async fn outbox_backlog(&self) -> Result<i64, StoreError>;
}

/// GitHub App setup: the manifest flow's state and the app's credentials.
#[async_trait::async_trait]
pub trait GitHubAppStore: Send + Sync {
    /// A fresh single-use setup `state`, valid for `ttl`; only its hash is kept.
    async fn create_setup_state(&self, ttl: Duration) -> Result<SetupState, StoreError>;
    /// Checks a `state` from GitHub's redirect and marks it used; `Accepted` once, under
    /// concurrent callers on any replica.
    async fn consume_setup_state(&self, state: &str) -> Result<SetupStateCheck, StoreError>;
    /// Stores the App's credentials, replacing any stored before.
    async fn save_github_app_credentials(
        &self,
        credentials: &GitHubAppCredentials,
    ) -> Result<(), StoreError>;
    /// The stored App credentials, if the setup was completed.
    async fn github_app_credentials(&self) -> Result<Option<GitHubAppCredentials>, StoreError>;
}

/// Acceptances (`/benchgate accept`).
#[async_trait::async_trait]
pub trait AcceptanceStore: Send + Sync {
    /// Records an acceptance of a head's failing rows; one still in force for the same head is
    /// revoked by it.
    async fn accept(&self, new: &NewAcceptance) -> Result<Acceptance, StoreError>;
    /// Revokes the acceptance of a head, if any; returns how many were in force.
    async fn revoke_acceptance(
        &self,
        repository_id: RepositoryId,
        head_sha: &str,
        by: &str,
    ) -> Result<u64, StoreError>;
    /// The acceptance of a head in force, if any.
    async fn active_acceptance(
        &self,
        repository_id: RepositoryId,
        head_sha: &str,
    ) -> Result<Option<Acceptance>, StoreError>;
    /// Every acceptance, revoked ones included, by repository and newest first.
    async fn acceptances(&self, limit: i64) -> Result<Vec<Acceptance>, StoreError>;
}

/// The default branch's history and its regressions.
#[async_trait::async_trait]
pub trait MainHistoryStore: Send + Sync {
    /// Every comparison of one branch (steps and anchor comparisons), oldest first.
    async fn main_comparisons(
        &self,
        repository_id: RepositoryId,
        branch: &str,
    ) -> Result<Vec<Comparison>, StoreError>;
    /// Every (repository, branch, label, suite) with a comparison of its history.
    async fn main_series(&self) -> Result<Vec<MainSeries>, StoreError>;
    /// Opens a regression episode, or notes another sighting of the open one.
    async fn open_regression(&self, new: &NewRegression) -> Result<Regression, StoreError>;
    /// Closes an open episode; `false` when it was not open.
    async fn close_regression(&self, id: i64, by: ComparisonId) -> Result<bool, StoreError>;
    /// Records the GitHub issue raised for an episode.
    async fn set_regression_issue(&self, id: i64, issue_number: i64) -> Result<(), StoreError>;
    async fn regression(&self, id: i64) -> Result<Option<Regression>, StoreError>;
    /// A repository's regression episodes, newest first.
    async fn regressions(&self, repository_id: RepositoryId)
    -> Result<Vec<Regression>, StoreError>;
}

/// Culprit searches and their probes.
#[async_trait::async_trait]
pub trait BisectionStore: Send + Sync {
    /// Starts a search (with the outbox row that takes its first step), or returns the one of
    /// the same benchmark and range already running; `true` when new.
    async fn create_bisection(&self, new: &NewBisection) -> Result<(Bisection, bool), StoreError>;
    async fn bisection(&self, id: i64) -> Result<Option<Bisection>, StoreError>;
    /// A repository's searches, newest first.
    async fn bisections(&self, repository_id: RepositoryId) -> Result<Vec<Bisection>, StoreError>;
    /// Ids of the searches still running.
    async fn running_bisections(&self) -> Result<Vec<i64>, StoreError>;
    /// Records the range a search read.
    async fn set_bisection_commits(
        &self,
        id: i64,
        commits: &[RangeCommit],
    ) -> Result<(), StoreError>;
    /// Ends a running search; `false` when it had ended.
    async fn finish_bisection(
        &self,
        id: i64,
        state: BisectionState,
        outcome: &SearchOutcome,
    ) -> Result<bool, StoreError>;
    /// A search's probes in order.
    async fn bisection_probes(&self, id: i64) -> Result<Vec<BisectionProbe>, StoreError>;
    /// Adds probe `seq` (`Conflict` when it exists).
    async fn add_bisection_probe(
        &self,
        id: i64,
        seq: i64,
        older: &str,
        newer: &str,
    ) -> Result<(), StoreError>;
    /// Ends a running probe; `false` when it had ended.
    async fn end_bisection_probe(
        &self,
        id: i64,
        seq: i64,
        end: &ProbeEnd,
    ) -> Result<bool, StoreError>;
    /// Comparisons without a PR of `head` against `base` on `runner_label`, oldest first.
    async fn comparisons_of_pair(
        &self,
        repository_id: RepositoryId,
        runner_label: &str,
        base: &str,
        head: &str,
    ) -> Result<Vec<Comparison>, StoreError>;
    /// Search `id` waits on `comparison`: when it ends, the store writes the search's next row.
    async fn bisection_waits_on(&self, id: i64, comparison: ComparisonId)
    -> Result<(), StoreError>;
}
