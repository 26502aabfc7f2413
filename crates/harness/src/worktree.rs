//! One git worktree per side, kept between calls so each side's build is incremental: switching
//! a worktree to another commit leaves its ignored build output (`target/`) in place.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use benchgate_api::Side;

/// A git or build step that failed.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("cannot run git: {0}")]
    GitMissing(std::io::Error),
    #[error("`git {args}` failed: {stderr}")]
    Git { args: String, stderr: String },
    #[error("{0:?} is not a revision of this repository")]
    UnknownRevision(String),
    #[error("cannot run the {side} build `{command}`: {source}")]
    BuildSpawn {
        side: &'static str,
        command: String,
        source: std::io::Error,
    },
    #[error("the {side} build `{command}` failed ({status}); last lines of its output:\n{tail}")]
    BuildFailed {
        side: &'static str,
        command: String,
        status: std::process::ExitStatus,
        tail: String,
    },
}

/// The repository around a directory and where its benchmark worktrees live.
#[derive(Debug, Clone)]
pub struct Repository {
    /// The top level of the work tree the user is in.
    pub toplevel: PathBuf,
    /// `<git common dir>/benchgate-worktrees`: inside `.git`, so `git status` never shows it,
    /// and shared by every worktree of the repository.
    pub worktrees_dir: PathBuf,
}

impl Repository {
    /// The repository containing `dir`.
    pub fn discover(dir: &Path) -> Result<Self, WorktreeError> {
        let toplevel = git(dir, &["rev-parse", "--show-toplevel"])?;
        let common = git(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        )?;
        Ok(Repository {
            toplevel: PathBuf::from(toplevel),
            worktrees_dir: PathBuf::from(common).join("benchgate-worktrees"),
        })
    }

    /// The commit `rev` names (a branch, tag, `HEAD~2`, a sha).
    pub fn resolve(&self, rev: &str) -> Result<String, WorktreeError> {
        git(
            &self.toplevel,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        )
        .map_err(|_| WorktreeError::UnknownRevision(rev.to_owned()))
    }

    /// The worktree of `side`, checked out at `sha` (detached), created on first use.
    pub fn checkout(&self, side: Side, sha: &str) -> Result<PathBuf, WorktreeError> {
        let path = self.worktrees_dir.join(side.as_str());
        let path_str = path.to_string_lossy().into_owned();
        if path.join(".git").exists() {
            git(&path, &["checkout", "--quiet", "--detach", "--force", sha])?;
        } else {
            // A worktree directory deleted by hand leaves a stale registration behind.
            git(&self.toplevel, &["worktree", "prune"])?;
            git(
                &self.toplevel,
                &[
                    "worktree", "add", "--quiet", "--detach", "--force", &path_str, sha,
                ],
            )?;
        }
        Ok(path)
    }
}

/// Runs `command` through `sh -c` in `dir` with the caller's environment (a build needs the
/// toolchain's variables; only benchmark runs are scrubbed). Output is kept for the error only.
pub fn build(dir: &Path, side: Side, command: &str) -> Result<(), WorktreeError> {
    let output = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| WorktreeError::BuildSpawn {
            side: side.as_str(),
            command: command.to_owned(),
            source,
        })?;
    if output.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = text.lines().collect();
    Err(WorktreeError::BuildFailed {
        side: side.as_str(),
        command: command.to_owned(),
        status: output.status,
        tail: lines[lines.len().saturating_sub(20)..].join("\n"),
    })
}

fn git(dir: &Path, args: &[&str]) -> Result<String, WorktreeError> {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(WorktreeError::GitMissing)?;
    if !status.success() {
        return Err(WorktreeError::Git {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&stdout).trim().to_owned())
}
