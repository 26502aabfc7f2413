//! What `compare` ended with: a measured outcome, builds identical byte for byte, or a change
//! the suite's `ignore` covers, so nothing was run.

use serde::Serialize;

use super::SessionRecord;
use crate::cli::CliError;
use crate::cli::args::CompareArgs;
use crate::evaluate::{Evaluation, FailOn};
use crate::rounds::RunnerConfig;
use crate::worktree::Repository;
use benchgate_api::agent::ComparisonConfig;
use benchgate_api::paths::PathGlobs;

/// What `compare` found, before it is printed.
#[derive(Debug)]
pub struct CompareOutcome {
    pub evaluation: Evaluation,
    pub session: SessionRecord,
    /// What fails the gate: the flag, else the suite's `[gate]`, else `regression`.
    pub fail_on: FailOn,
    /// How the session's runs were made, for further runs of the same commands (`--profile`).
    pub runner: RunnerConfig,
}

/// A change `compare --config` does not measure: every file between the two commits matches
/// the suite's `ignore`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IgnoredChange {
    pub base: String,
    pub head: String,
    pub files: Vec<String>,
    pub ignore: Vec<String>,
}

impl IgnoredChange {
    /// What `compare` prints instead of a table.
    pub fn describe(&self) -> String {
        use benchgate_stats::words::short_sha;
        let files = match self.files.as_slice() {
            [one] => format!("the one file changed ({one}) matches"),
            many => format!("all {} files changed match", many.len()),
        };
        format!(
            "no benchmarked file changed between base {} and head {}: {files} the suite's \
             ignore ({}); nothing was run\n",
            short_sha(&self.base),
            short_sha(&self.head),
            self.ignore.join(", ")
        )
    }
}

/// With a suite that sets `ignore` and the revisions form: the change between the commits
/// that would be measured (the merge base, as [`compare`] picks it) when the globs cover it.
pub fn ignored_change(
    args: &CompareArgs,
    plan: Option<&ComparisonConfig>,
) -> Result<Option<IgnoredChange>, CliError> {
    let Some(spec) = plan.map(|p| &p.benchmark).filter(|b| !b.ignore.is_empty()) else {
        return Ok(None);
    };
    let (Some(base_rev), Some(head_rev)) = (&args.base_rev, &args.head_rev) else {
        return Ok(None);
    };
    let globs = PathGlobs::try_from(spec.ignore.clone())
        .map_err(|e| CliError::Usage(format!("--config: ignore: {e}")))?;
    let cwd = match &args.repo {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|e| CliError::Usage(format!("no current directory: {e}")))?,
    };
    let repo = Repository::discover(&cwd)?;
    let (mut base, head) = (repo.resolve(base_rev)?, repo.resolve(head_rev)?);
    if !args.base_tip
        && let Some(point) = repo.branch_point(base_rev, &base, &head)?
    {
        base = point.merge_base;
    }
    let files = repo.changed_files(&base, &head)?;
    Ok(globs
        .cover(files.iter().map(String::as_str))
        .then(|| IgnoredChange {
            base,
            head,
            files,
            ignore: spec.ignore.clone(),
        }))
}

/// What a session ended with: rounds measured, or builds that left nothing to measure.
#[derive(Debug)]
pub enum Compared {
    Measured(Box<CompareOutcome>),
    IdenticalBuild(IdenticalBuildOutcome),
}

impl Compared {
    /// The measured outcome; `None` for an identical build.
    pub fn measured(self) -> Option<CompareOutcome> {
        match self {
            Compared::Measured(outcome) => Some(*outcome),
            Compared::IdenticalBuild(_) => None,
        }
    }
}

/// Both commits built to byte-identical `artifacts`: the answer is exact, and no round ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdenticalBuildOutcome {
    pub base: String,
    pub head: String,
    pub build: benchgate_api::agent::IdenticalBuild,
}

impl IdenticalBuildOutcome {
    /// What `compare` prints instead of a table.
    pub fn describe(&self) -> String {
        use benchgate_stats::words::short_sha;
        format!(
            "base {} and head {}: {}\n",
            short_sha(&self.base),
            short_sha(&self.head),
            self.build.describe()
        )
    }
}

/// The suite's `artifacts` compared between the built work trees (emptied of matches before
/// each build); `None` when it names none, or the sides differ (said on stderr, with how many
/// files differ).
pub(super) fn identical_build(
    globs: &PathGlobs,
    dirs: &[std::path::PathBuf],
) -> Result<Option<benchgate_api::agent::IdenticalBuild>, CliError> {
    use crate::artifacts;
    if globs.patterns().is_empty() {
        return Ok(None);
    }
    let read = |dir: &std::path::PathBuf| {
        artifacts::digest(dir, globs).map_err(|e| CliError::Input(e.to_string()))
    };
    let (base, head) = (read(&dirs[0])?, read(&dirs[1])?);
    let same = artifacts::identical(&base, &head);
    if same.is_none() {
        eprintln!(
            "artifacts: {}; measuring",
            artifacts::difference(&base, &head)
        );
    }
    Ok(same)
}
