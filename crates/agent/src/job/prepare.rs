//! Both sides checked out at their shas and built, each with its own build environment.

use std::path::PathBuf;
use std::time::Duration;

use benchgate_api::Side;
use benchgate_api::agent::ClaimedJob;
use benchgate_harness::env::ScrubbedEnv;
use benchgate_harness::sandbox::{Sandbox, isolation_name};

use crate::checkout::{self, Checkout, Overlay};
use benchgate_api::paths::PathGlobs;

/// Both worktrees at their shas, built.
pub(super) struct Prepared {
    pub(super) base: PathBuf,
    pub(super) head: PathBuf,
    /// Build time of base and head; `None` when there is nothing to build.
    pub(super) build_times: Option<[Duration; 2]>,
}

/// The build environment of each side: the suite's, plus what the job sets for that side.
pub(super) fn side_build_envs(
    suite: &ScrubbedEnv,
    sides: &benchgate_api::agent::SideEnvs,
) -> Result<[ScrubbedEnv; 2], String> {
    let with = |extra: &[String]| {
        let mut env = suite.clone();
        for entry in extra {
            let (name, value) = entry
                .split_once('=')
                .filter(|(n, _)| !n.is_empty())
                .ok_or_else(|| {
                    format!("the job's build environment entry {entry:?} is not NAME=value")
                })?;
            env.set(name, value.to_owned());
        }
        Ok::<_, String>(env)
    };
    Ok([with(&sides.base.build)?, with(&sides.head.build)?])
}

/// `NAME` of a `NAME=value` entry, for logs (values may be long salts or paddings).
pub(super) fn env_name(entry: &str) -> &str {
    entry.split_once('=').map_or(entry, |(n, _)| n)
}

pub(super) fn prepare(
    work_dir: &std::path::Path,
    claim: &ClaimedJob,
    build_env: &[ScrubbedEnv; 2],
    sandbox: Option<&Sandbox>,
    containment: Option<&benchgate_harness::limits::Containment>,
) -> Result<Prepared, checkout::CheckoutError> {
    // Outputs a comparison of two commits compares; an A/A, canary or layout session never
    // does (see `identical_build`), and nothing of theirs is removed.
    let artifacts = if claim.sides.is_none() && claim.base_sha != claim.head_sha {
        PathGlobs::try_from(claim.benchmark.artifacts.clone()).unwrap_or_default()
    } else {
        PathGlobs::default()
    };
    let repo =
        Checkout::new(work_dir, &claim.repository.clone_url).removing_before_build(artifacts);
    repo.fetch(&[&claim.base_sha, &claim.head_sha])?;
    let globs = PathGlobs::try_from(claim.benchmark.bench_from_head.clone())
        .map_err(checkout::CheckoutError::BenchFromHeadGlob)?;
    let files = repo.head_benchmarks(&claim.base_sha, &claim.head_sha, &globs)?;
    if !globs.patterns().is_empty() {
        tracing::info!(
            globs = %globs.patterns().join(", "),
            taken = %files.summary(),
            "the base side runs head's benchmark files (bench_from_head)"
        );
    }
    let overlay = Overlay {
        files: &files,
        head_sha: &claim.head_sha,
    };
    let command = claim
        .benchmark
        .build
        .as_deref()
        .filter(|c| !c.trim().is_empty());
    let (base, b) = repo.built_worktree(
        Side::Base,
        &claim.base_sha,
        Some(&overlay),
        command,
        &build_env[0],
        checkout::Confine {
            sandbox,
            limits: containment,
        },
    )?;
    if claim.base_sha == claim.head_sha && files.is_empty() && build_env[0] == build_env[1] {
        // An A/A of one commit built one way (no layout salt, no side's own environment): both
        // sides run the same build, so it is built once and both run in its tree.
        tracing::info!(
            base_ms = b.map(|b| b.as_millis() as u64),
            isolation = isolation_name(sandbox),
            "one build for both sides (the same commit, built the same way)"
        );
        return Ok(Prepared {
            head: base.clone(),
            base,
            build_times: None,
        });
    }
    let (head, h) = repo.built_worktree(
        Side::Head,
        &claim.head_sha,
        None,
        command,
        &build_env[1],
        checkout::Confine {
            sandbox,
            limits: containment,
        },
    )?;
    tracing::info!(
        base_ms = b.map(|b| b.as_millis() as u64),
        head_ms = h.map(|h| h.as_millis() as u64),
        isolation = isolation_name(sandbox),
        "both sides built (a side without a time reused the build of an earlier job)"
    );
    // A build time is compared only when both sides were built here: a reused side's time was
    // uploaded by the job that built it, or belongs to another pair.
    let build_times = b.zip(h).map(|(b, h)| [b, h]);
    Ok(Prepared {
        base,
        head,
        build_times,
    })
}
