//! What a stored comparison was made for beside its suite: the pull request's context, a
//! merge group's, a canary's or a layout session's, and the environment each side gets from
//! them ([`StoredComparisonConfig`]).

use serde::{Deserialize, Serialize};

use crate::suite::{ComparisonConfig, MainSettings, MergeQueueSettings};

/// `layout_salt = "env-padding"`: any language, no rebuild.
pub const LAYOUT_ENV_PADDING: &str = "env-padding";

/// The variable `env-padding` sets in each run.
pub const LAYOUT_PAD_VAR: &str = "BENCHGATE_LAYOUT_PAD";

/// The variable a planted canary sets in head's runs: the factor of work to do (`1.05` = 5%
/// more). `benchgate spin` honours it; a suite can too.
pub const PLANTED_VAR: &str = "BENCHGATE_PLANTED";

/// What one side of a layout session gets: build and run environment entries.
pub fn layout_side_env(template: &str, salt: &str) -> Result<SideEnv, String> {
    if template == LAYOUT_ENV_PADDING {
        // A salt-dependent length between 0 and 4095 bytes: the stack moves with it.
        let len = salt
            .bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
            % 4096;
        return Ok(SideEnv {
            build: Vec::new(),
            run: vec![format!("{LAYOUT_PAD_VAR}={}", "x".repeat(len as usize))],
        });
    }
    check_layout_salt(template)?;
    Ok(SideEnv {
        build: vec![template.replace("{salt}", salt)],
        run: Vec::new(),
    })
}

/// `layout_salt` is `env-padding` or `NAME=value` whose value holds `{salt}`.
pub fn check_layout_salt(template: &str) -> Result<(), String> {
    if template == LAYOUT_ENV_PADDING {
        return Ok(());
    }
    let valid_name = |n: &str| {
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match template.split_once('=') {
        Some((name, value)) if valid_name(name) && value.contains("{salt}") => Ok(()),
        _ => Err(format!(
            "layout_salt must be \"{LAYOUT_ENV_PADDING}\" or NAME=value with {{salt}} in the value \
             (e.g. \"RUSTFLAGS=-Cmetadata={{salt}}\"), found {template:?}"
        )),
    }
}

/// A canary: one commit compared with itself on one runner at the lowest priority, so the
/// runner's audit can count how often its verdicts claim what is not there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CanarySpec {
    /// The runner it measures (its jobs go to no other).
    pub runner_id: i64,
    /// `None`: an A/A canary. Otherwise head does this much more work, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planted_pct: Option<f64>,
    /// How the planted change is made.
    #[serde(default)]
    pub planted_by: PlantedBy,
}

impl CanarySpec {
    /// Head's factor of work: 1 for an A/A canary.
    pub fn factor(&self) -> f64 {
        1.0 + self.planted_pct.unwrap_or(0.0) / 100.0
    }
}

/// How a canary plants its change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlantedBy {
    /// Head's runs get [`PLANTED_VAR`] and do more work (`benchgate spin`, or a suite that
    /// reads it): real work, real noise.
    #[default]
    Work,
    /// Head's measured values are scaled when the canary is scored: any suite, real noise, an
    /// exact effect.
    Scale,
}

/// The two salts of a layout session: each side is built (or run) with its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutSalts {
    pub base: String,
    pub head: String,
}

/// Environment entries (`NAME=value`) one side gets beyond the suite's own.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SideEnv {
    /// For the build.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build: Vec<String>,
    /// For every run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run: Vec<String>,
}

/// What makes the two sides of a job differ beyond their commits (a canary's planted work, a
/// layout session's salts).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SideEnvs {
    #[serde(default)]
    pub base: SideEnv,
    #[serde(default)]
    pub head: SideEnv,
}

/// A comparison's stored `config`: what ran and how it is judged, what the server planned
/// before any A/B data, and the pull request's context when GitHub asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredComparisonConfig {
    /// The repository's configuration, as the jobs received it.
    #[serde(flatten)]
    pub config: ComparisonConfig,
    /// Planned pairs n* per benchmark, from the A/A floor of that benchmark's gated metric;
    /// a benchmark missing here uses the comparison's `planned_rounds` or the default.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub n_star: std::collections::BTreeMap<String, i64>,
    /// What the scheduler learnt of the pull request (absent for admin comparisons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<PullRequestContext>,
    /// `[main]` of the file, for a comparison of the default branch's history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main: Option<MainSettings>,
    /// The pull request whose merge a step of the default branch compares, as the commit
    /// message names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_pr: Option<u64>,
    /// Set for a comparison made for GitHub's merge queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_group: Option<MergeGroupContext>,
    /// Set for a canary comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<CanarySpec>,
    /// Set for a layout calibration job: each side's salt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<LayoutSalts>,
}

/// What a comparison was made for, from its stored context: read here and nowhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A pull request's head against its base.
    PullRequest,
    /// A merge group of GitHub's merge queue.
    MergeGroup,
    /// A step or an anchor of the default branch's history.
    MainHistory,
    /// A canary on one runner: A/A or with planted work.
    Canary,
    /// A layout calibration session.
    LayoutSession,
    /// The suite alone: asked through the admin API, or a culprit search's probe.
    Plain,
}

/// A stored config is its repository's configuration plus what the server added, as its JSON
/// is (`config` is flattened): `c.config.benchmark` reads the suite's benchmark.
impl std::ops::Deref for StoredComparisonConfig {
    type Target = ComparisonConfig;

    fn deref(&self) -> &ComparisonConfig {
        &self.config
    }
}

impl std::ops::DerefMut for StoredComparisonConfig {
    fn deref_mut(&mut self) -> &mut ComparisonConfig {
        &mut self.config
    }
}

impl StoredComparisonConfig {
    /// What this comparison was made for. Each context is set by one scheduler only; were two
    /// set, the first of layout, canary, merge group, history, pull request would count.
    pub fn purpose(&self) -> Purpose {
        if self.layout.is_some() {
            Purpose::LayoutSession
        } else if self.canary.is_some() {
            Purpose::Canary
        } else if self.merge_group.is_some() {
            Purpose::MergeGroup
        } else if self.main.is_some() {
            Purpose::MainHistory
        } else if self.github.is_some() {
            Purpose::PullRequest
        } else {
            Purpose::Plain
        }
    }

    /// The same suite and plan without what it was made for (pull request, history step, merge
    /// group, canary, layout session): a probe's or canary's workload.
    pub fn without_context(self) -> Self {
        StoredComparisonConfig {
            n_star: self.n_star,
            ..self.config.into()
        }
    }

    /// What each side gets beyond the suite's environment: a planted canary's work on head, a
    /// layout session's salts. `None` when the sides differ only in their commits.
    pub fn side_envs(&self) -> Result<Option<SideEnvs>, String> {
        let mut envs = SideEnvs::default();
        if let Some(canary) = self.canary.as_ref().filter(|c| c.planted_pct.is_some())
            && canary.planted_by == PlantedBy::Work
        {
            envs.head
                .run
                .push(format!("{PLANTED_VAR}={}", canary.factor()));
        }
        if let Some(salts) = &self.layout {
            let template = self
                .config
                .benchmark
                .layout_salt
                .as_deref()
                .ok_or("a layout session of a suite without layout_salt")?;
            let (base, head) = (
                layout_side_env(template, &salts.base)?,
                layout_side_env(template, &salts.head)?,
            );
            envs.base.build.extend(base.build);
            envs.base.run.extend(base.run);
            envs.head.build.extend(head.build);
            envs.head.run.extend(head.run);
        }
        Ok((envs != SideEnvs::default()).then_some(envs))
    }
}

impl From<ComparisonConfig> for StoredComparisonConfig {
    /// The config as given, nothing planned and no pull request (admin API, tests).
    fn from(config: ComparisonConfig) -> Self {
        StoredComparisonConfig {
            config,
            n_star: Default::default(),
            github: None,
            main: None,
            merged_pr: None,
            merge_group: None,
            canary: None,
            layout: None,
        }
    }
}

/// A comparison made for GitHub's merge queue: the group's head against its base, or one of
/// the group's commits against its parent (a step that names the PR that made it slower).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeGroupContext {
    /// The group's ref without `refs/heads/`, e.g. `gh-readonly-queue/main/pr-104-<sha>`.
    pub head_ref: String,
    /// The branch the group merges into.
    pub base_ref: String,
    /// `[merge_queue]` as the base branch had it.
    pub settings: MergeQueueSettings,
    /// The group's commits, oldest first: one per pull request it merges.
    pub prs: Vec<GroupPullRequest>,
    /// Set on a step: the head sha of the group it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_of: Option<String>,
    /// Set on a step: its rows are judged at α divided by this, the group's PRs sharing one
    /// error budget, so that an innocent PR is named at most α of the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_split: Option<u32>,
}

/// One pull request of a merge group, and the group's commit that merges it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupPullRequest {
    /// The PR's number, as the commit message or the group's ref names it.
    pub number: Option<u64>,
    /// The group's commit that merges it.
    pub sha: String,
    /// That commit's first parent (the base, or the commit merging the PR before it).
    pub parent: String,
}

/// The pull request behind a comparison, as the scheduler saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestContext {
    /// Head commits come from another repository: nothing runs before a maintainer approves.
    #[serde(default)]
    pub fork: bool,
    /// Benchmark files (per `[benchmark] paths`) the PR changes.
    #[serde(default)]
    pub benchmark_files_changed: Vec<String>,
    /// Where the PR branched: the comparison's base is this merge base, not the base branch's
    /// tip. `None` for comparisons scheduled before it was recorded.
    #[serde(default)]
    pub branch: Option<PullRequestBranch>,
    /// The PR's description when it was scheduled: its performance claims are read from it
    /// (benchgate-claims) and answered in the comment.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// Claims stated in `/benchgate claim` comments, one per benchmark (the newest wins);
    /// later heads of the PR carry them on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claimed: Vec<CommentClaim>,
}

/// A `/benchgate claim BENCHMARK CHANGE` comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommentClaim {
    /// The command's line, as `benchgate_claims::explicit` reads it.
    pub line: String,
    /// The benchmark it names, as written: a later claim on it replaces this one.
    pub benchmark: String,
    /// Who commented, and the comment's id (a retried command adds nothing).
    pub by: String,
    pub comment_id: u64,
}

/// Most comment claims a PR keeps: each is answered in every report.
pub const MAX_COMMENT_CLAIMS: usize = 50;

impl PullRequestContext {
    /// Adds `claim`, replacing an earlier one on the same benchmark; `false` when this comment
    /// was added before or the PR holds [`MAX_COMMENT_CLAIMS`] on other benchmarks.
    pub fn add_claim(&mut self, claim: CommentClaim) -> bool {
        if self
            .claimed
            .iter()
            .any(|c| c.comment_id == claim.comment_id)
        {
            return false;
        }
        self.claimed.retain(|c| c.benchmark != claim.benchmark);
        if self.claimed.len() >= MAX_COMMENT_CLAIMS {
            return false;
        }
        self.claimed.push(claim);
        true
    }
}

/// Which base a PR comparison measures from, and what the base branch did since the PR
/// branched: GitHub's `pull_request.base.sha` is the branch's tip, which may hold commits the
/// PR never saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestBranch {
    /// The base branch (`main`).
    pub base_ref: String,
    /// The base branch's tip when the PR was scheduled (`pull_request.base.sha`).
    pub base_tip: String,
    /// Commits on the base branch since the merge base: not part of this comparison.
    pub base_ahead_by: u64,
    /// GitHub found no common commit of base and head: the tip is measured instead.
    #[serde(default)]
    pub no_merge_base: bool,
    /// Tree ids of the two commits measured (`None` without a merge base): a merge group is
    /// the same change only when its trees are these.
    #[serde(default)]
    pub trees: Option<MeasuredTrees>,
}

/// Tree ids (the contents, whatever the commit) of a comparison's base and head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasuredTrees {
    pub base: String,
    pub head: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each scheduler sets one context; the stored JSON says which, and nothing else is read.
    #[test]
    fn a_comparison_s_purpose_is_read_from_its_one_context() {
        let plain: StoredComparisonConfig =
            serde_json::from_value(serde_json::json!({"benchmark": {"run": "./bench"}})).unwrap();
        assert_eq!(plain.purpose(), Purpose::Plain);
        let with = |f: &dyn Fn(&mut StoredComparisonConfig)| {
            let mut c = plain.clone();
            f(&mut c);
            c.purpose()
        };
        let pr = |c: &mut StoredComparisonConfig| c.github = Some(PullRequestContext::default());
        assert_eq!(with(&pr), Purpose::PullRequest);
        assert_eq!(
            with(&|c| c.main = Some(MainSettings::default())),
            Purpose::MainHistory
        );
        let canary = |c: &mut StoredComparisonConfig| {
            c.canary = Some(CanarySpec {
                runner_id: 1,
                planted_pct: None,
                planted_by: PlantedBy::default(),
            })
        };
        assert_eq!(with(&canary), Purpose::Canary);
        assert_eq!(
            with(&|c| {
                c.layout = Some(LayoutSalts {
                    base: "a".into(),
                    head: "b".into(),
                })
            }),
            Purpose::LayoutSession
        );
        // A probe's or a canary's workload drops what it was made for.
        let mut from_pr = plain.clone();
        pr(&mut from_pr);
        assert_eq!(from_pr.without_context().purpose(), Purpose::Plain);
    }
}
