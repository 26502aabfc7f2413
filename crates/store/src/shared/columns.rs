//! Column lists of the tables read back into models, shared by every query that selects them.

pub(crate) const RUNNER_COLUMNS: &str =
    "id, name, labels, fingerprint, created_at, last_seen_at, revoked_at, audit_since";

pub(crate) const REPOSITORY_COLUMNS: &str =
    "id, github_id, installation_id, full_name, clone_url, forge, created_at, removed_at";

/// Needs `FROM comparisons c JOIN repositories r ON r.id = c.repository_id`.
pub(crate) const COMPARISON_COLUMNS: &str = "c.id, c.repository_id, r.full_name AS repository, c.pr_number, c.base_sha, c.head_sha, \
     c.runner_label, c.kind, c.config, c.planned_rounds, c.state, c.check_run_id, c.rounds_generation, \
     c.check_run_generation, c.check_run_completed, c.branch, c.main_kind, c.main_suite, \
     c.main_commits, c.created_at, c.updated_at";

pub(crate) const JOB_COLUMNS: &str = "id, kind, comparison_id, repository_id, base_sha, head_sha, config, runner_label, \
     pinned_runner_id, rounds, priority, state, cancel_requested, lease_expires_at, \
     claimed_by, attempts, max_attempts, last_error, log_tail, created_at, started_at, \
     finished_at, profile, identical_build";

/// The order a claim takes queued jobs in (highest priority, then oldest): every query that
/// says where a job stands in the queue orders by it, so it can never disagree with a claim.
pub(crate) const CLAIM_ORDER: &str = "priority DESC, created_at, id";

pub(crate) const PROFILE_COLUMNS: &str = "job_id, comparison_id, runner_id, event, unavailable, runs, base_folded, \
     head_folded, created_at";

/// Needs `FROM samples s JOIN runners rn ON rn.id = s.runner_id`.
pub(crate) const SAMPLE_COLUMNS: &str = "s.job_id, s.attempt, s.runner_id, rn.name AS runner_name, s.round, s.side, s.position, \
     s.benchmark, s.metric, s.unit, s.value, s.lower, s.upper, s.direction, s.recorded_at";

pub(crate) const FLOOR_COLUMNS: &str = "runner_id, repository_id, benchmark, metric, pairs, sessions, within_spread, \
     between_bias, layout_bias, layout_lower, layout_upper, mode_slow_runs, mode_runs, mode_sessions, \
     mode_excess, computed_at";

pub(crate) const CANARY_RESULT_COLUMNS: &str = "comparison_id, runner_id, benchmark, metric, planted_pct, verdict, \
     rounds, minutes, forecast_at, forecast_rounds, recorded_at";

pub(crate) const FORECAST_COLUMNS: &str = "comparison_id, runner_id, benchmark, metric, at_rounds, needed, made_at, \
     decided_rounds, decided_at";

pub(crate) const OUTBOX_COLUMNS: &str =
    "id, kind, dedupe_key, payload, priority, attempts, last_error, created_at";
