//! Comparisons: two commits of a repository compared on one runner label, with their jobs,
//! check runs and stored results.

use super::{ComparisonId, JobId, NewJob, NewOutboxMessage, RepositoryId, RunnerId};
use benchgate_api::agent::StoredComparisonConfig;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Where a comparison is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonState {
    /// Jobs queued, none started.
    Queued,
    /// At least one job started and some are not finished.
    Running,
    /// Every job ended and at least one succeeded.
    Done,
    /// Every job ended and none succeeded.
    Failed,
    /// A newer head of the same PR replaced it.
    Superseded,
    /// The PR was closed.
    Cancelled,
}

impl ComparisonState {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Superseded => "superseded",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "queued" => Self::Queued,
            "running" => Self::Running,
            "done" => Self::Done,
            "failed" => Self::Failed,
            "superseded" => Self::Superseded,
            "cancelled" => Self::Cancelled,
            _ => return None,
        })
    }

    /// Whether no further rounds will run.
    pub fn is_finished(self) -> bool {
        !matches!(self, Self::Queued | Self::Running)
    }
}

/// A comparison to create, with its jobs, in one transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewComparison {
    pub repository_id: RepositoryId,
    /// `None` for a comparison requested without a PR (admin API, demo).
    pub pr_number: Option<i64>,
    pub base_sha: String,
    pub head_sha: String,
    pub runner_label: String,
    /// The repository config as parsed from `.benchgate.toml` on the base branch, with what
    /// the server planned before any A/B data.
    pub config: StoredComparisonConfig,
    /// n*, planned from the runner's A/A spread before any A/B data.
    pub planned_rounds: Option<i64>,
    pub jobs: Vec<NewJob>,
    /// A comparison of the default branch's history; `None` for a PR's or an ad-hoc one.
    pub main: Option<MainInfo>,
    /// Outbox rows written in the same transaction; each payload object gets `comparison_id` set,
    /// and a row without a dedupe key gets `{kind}:{id}` (so it coalesces with later reports).
    pub notify: Vec<NewOutboxMessage>,
}

impl NewComparison {
    /// `base_sha` against `head_sha` of a repository on one runner label: no pull request, no
    /// plan, no jobs, no outbox rows. The methods below add what a comparison is made for.
    pub fn new(
        repository_id: RepositoryId,
        base_sha: impl Into<String>,
        head_sha: impl Into<String>,
        runner_label: impl Into<String>,
        config: StoredComparisonConfig,
    ) -> Self {
        NewComparison {
            repository_id,
            pr_number: None,
            base_sha: base_sha.into(),
            head_sha: head_sha.into(),
            runner_label: runner_label.into(),
            config,
            planned_rounds: None,
            jobs: Vec::new(),
            main: None,
            notify: Vec::new(),
        }
    }

    /// The comparison of pull request `pr` (or of none).
    pub fn pr(mut self, pr: impl Into<Option<i64>>) -> Self {
        self.pr_number = pr.into();
        self
    }

    /// Other commits to compare.
    pub fn between(mut self, base_sha: impl Into<String>, head_sha: impl Into<String>) -> Self {
        self.base_sha = base_sha.into();
        self.head_sha = head_sha.into();
        self
    }

    /// n* planned before any A/B data.
    pub fn planned(mut self, rounds: i64) -> Self {
        self.planned_rounds = Some(rounds);
        self
    }

    /// `count` jobs like `job`.
    pub fn jobs(mut self, count: usize, job: NewJob) -> Self {
        self.jobs = vec![job; count];
        self
    }

    /// A step (or an anchor) of `branch`'s history covering `commits`, head last; the
    /// lone `[benchmark]`'s suite.
    pub fn main(mut self, kind: MainKind, branch: &str, commits: Vec<String>) -> Self {
        self.main = Some(MainInfo {
            branch: branch.into(),
            kind,
            suite: String::new(),
            commits,
        });
        self
    }

    /// Outbox rows written in the same transaction.
    pub fn notify(mut self, rows: Vec<NewOutboxMessage>) -> Self {
        self.notify = rows;
        self
    }
}

/// What creating a comparison did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedComparison {
    pub id: ComparisonId,
    pub jobs: Vec<JobId>,
    /// Older comparisons of the same PR and runner label (another head) that were superseded.
    pub superseded: Vec<ComparisonId>,
    /// Steps of the same branch, suite and label still queued, folded into this one: it starts
    /// from the oldest one's base and covers their commits too.
    pub folded: Vec<ComparisonId>,
}

/// Which part of the default branch's history a comparison is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MainKind {
    /// A pushed commit against the last compared commit of the branch.
    Step,
    /// The branch now against an older commit (creep detection).
    Anchor,
}

impl MainKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MainKind::Step => "step",
            MainKind::Anchor => "anchor",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "step" => MainKind::Step,
            "anchor" => MainKind::Anchor,
            _ => return None,
        })
    }
}

/// What makes a comparison part of the default branch's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MainInfo {
    pub branch: String,
    pub kind: MainKind,
    /// The suite key (`""` for a lone `[benchmark]`): one chain per suite and runner label.
    pub suite: String,
    /// The commits between base and head, oldest first, head last (a step of several when
    /// pushes were folded); for an anchor comparison, what it was told.
    pub commits: Vec<String>,
}

/// A stored comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub id: ComparisonId,
    pub repository_id: RepositoryId,
    /// The repository's `full_name`, joined for display.
    pub repository: String,
    pub pr_number: Option<i64>,
    pub base_sha: String,
    pub head_sha: String,
    pub runner_label: String,
    /// What it is (pull request, merge group, history step, canary, …), stored.
    pub kind: ComparisonKind,
    /// What ran and how it is judged, as it was when the comparison was created.
    pub config: StoredComparisonConfig,
    pub planned_rounds: Option<i64>,
    pub state: ComparisonState,
    pub check_run_id: Option<i64>,
    /// Bumped each time rounds are added; a completed check run of an older generation is
    /// final, so the new rounds are reported on a new run.
    pub rounds_generation: i64,
    /// The generation `check_run_id` reports.
    pub check_run_generation: i64,
    /// benchgate has written `check_run_id` as completed.
    pub check_run_completed: bool,
    /// Set for a comparison of the default branch's history.
    pub main: Option<MainInfo>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What a comparison is: decided once, from its context and its place in the branch's history,
/// when it is created, and stored in its own column (`comparisons.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonKind {
    PullRequest,
    MergeGroup,
    /// A pushed commit of the default branch against the last compared one.
    MainStep,
    /// The default branch now against an older commit (creep).
    MainAnchor,
    Canary,
    LayoutSession,
    /// The suite alone: asked through the admin API, or a culprit search's probe.
    Plain,
}

impl ComparisonKind {
    /// Every kind, in the order listings name them.
    pub const ALL: [ComparisonKind; 7] = [
        Self::PullRequest,
        Self::MergeGroup,
        Self::MainStep,
        Self::MainAnchor,
        Self::Canary,
        Self::LayoutSession,
        Self::Plain,
    ];

    /// The kind of a comparison with this place in the history (if any) and this context.
    pub fn of(main: Option<MainKind>, config: &StoredComparisonConfig) -> Self {
        use benchgate_api::agent::Purpose;
        match main {
            Some(MainKind::Step) => return Self::MainStep,
            Some(MainKind::Anchor) => return Self::MainAnchor,
            None => {}
        }
        match config.purpose() {
            Purpose::PullRequest => Self::PullRequest,
            Purpose::MergeGroup => Self::MergeGroup,
            // A comparison is part of the history by its `main`, not by its config's `[main]`.
            Purpose::MainHistory | Purpose::Plain => Self::Plain,
            Purpose::Canary => Self::Canary,
            Purpose::LayoutSession => Self::LayoutSession,
        }
    }

    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PullRequest => "pull_request",
            Self::MergeGroup => "merge_group",
            Self::MainStep => "main_step",
            Self::MainAnchor => "main_anchor",
            Self::Canary => "canary",
            Self::LayoutSession => "layout_session",
            Self::Plain => "plain",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl NewComparison {
    /// What the comparison will be stored as.
    pub fn kind(&self) -> ComparisonKind {
        ComparisonKind::of(self.main.as_ref().map(|m| m.kind), &self.config)
    }
}

impl Comparison {
    /// What this comparison is (its stored kind).
    pub fn kind(&self) -> ComparisonKind {
        self.kind
    }
}

/// Which comparisons a listing shows; every field left `None` matches all.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ComparisonFilter {
    /// The repository's `full_name`, exactly.
    pub repository: Option<String>,
    pub pr_number: Option<i64>,
    /// A runner's name: it claimed one of the comparison's jobs or has results in it.
    pub runner: Option<String>,
    /// At least one stored result has this verdict.
    pub verdict: Option<benchgate_api::VerdictKind>,
    /// One of these kinds; empty matches every kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<ComparisonKind>,
}

/// A change to the pull request context stored with a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullRequestEdit {
    /// The description was edited: its claims are read again.
    Description(String),
    /// A `/benchgate claim` comment.
    Claim(benchgate_api::agent::CommentClaim),
}

/// A check run written for a comparison: which run, of which generation, and whether it was
/// written as completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRunRecord {
    pub check_run_id: i64,
    pub generation: i64,
    pub completed: bool,
}

/// The newest head GitHub announced for a PR, and when it arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestHead {
    pub head_sha: String,
    pub received_at: DateTime<Utc>,
}

/// One benchmark's computed result for a comparison on one runner, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredResult {
    pub runner_id: RunnerId,
    pub result: benchgate_api::BenchmarkResult,
    pub updated_at: DateTime<Utc>,
}
