//! The agent's git working area: one cached mirror clone per repository under the work dir and
//! one worktree per side, reused from job to job and moved with `git checkout --detach`, so
//! ignored build output stays in place and builds are incremental.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use benchgate_api::Side;
use benchgate_harness::env::ScrubbedEnv;
use benchgate_harness::sandbox::Sandbox;

/// A git command or a build that failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    #[error("cannot run {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("`git {args}` failed: {stderr}")]
    Git { args: String, stderr: String },
    #[error("commit {sha} is not in {repository} after fetching")]
    MissingCommit { repository: String, sha: String },
    #[error("the {side} build `{command}` failed ({status})")]
    BuildFailed {
        side: &'static str,
        command: String,
        status: String,
        /// The last lines of the build's output.
        tail: String,
    },
}

impl CheckoutError {
    /// The end of the failing command's output, for the job's log tail.
    pub fn log_tail(&self) -> String {
        match self {
            CheckoutError::BuildFailed { tail, .. } => tail.clone(),
            other => other.to_string(),
        }
    }
}

/// One repository's cached mirror and its two worktrees.
#[derive(Debug, Clone)]
pub struct Checkout {
    mirror: PathBuf,
    root: PathBuf,
    clone_url: String,
}

impl Checkout {
    /// The checkout area of `clone_url` under `work_dir` (nothing is touched yet).
    pub fn new(work_dir: &Path, clone_url: &str) -> Self {
        let root = work_dir.join("repos").join(dir_name(clone_url));
        Checkout {
            mirror: root.join("mirror.git"),
            root,
            clone_url: clone_url.to_owned(),
        }
    }

    /// Clones the mirror on first use, and fetches until every sha in `shas` is present.
    pub fn fetch(&self, shas: &[&str]) -> Result<(), CheckoutError> {
        if !self.mirror.join("HEAD").exists() {
            std::fs::create_dir_all(&self.root).map_err(|source| CheckoutError::Spawn {
                program: format!("mkdir {}", self.root.display()),
                source,
            })?;
            // A clone interrupted by a crash leaves a partial directory behind.
            let _ = std::fs::remove_dir_all(&self.mirror);
            let mirror = self.mirror.to_string_lossy().into_owned();
            git(
                &self.root,
                &["clone", "--mirror", "--quiet", &self.clone_url, &mirror],
            )?;
        }
        if shas.iter().any(|sha| !self.has_commit(sha)) {
            git(&self.mirror, &["fetch", "--quiet", "--prune", "origin"])?;
        }
        for sha in shas.iter().filter(|sha| !self.has_commit(sha)) {
            // Not on any branch (e.g. a force-pushed PR head): ask for the sha itself.
            let _ = git(&self.mirror, &["fetch", "--quiet", "origin", sha]);
            if !self.has_commit(sha) {
                return Err(CheckoutError::MissingCommit {
                    repository: self.clone_url.clone(),
                    sha: sha.to_string(),
                });
            }
        }
        Ok(())
    }

    /// The worktree of `side`, moved to `sha` (detached), created on first use.
    pub fn worktree(&self, side: Side, sha: &str) -> Result<PathBuf, CheckoutError> {
        let path = self.root.join(side.as_str());
        if path.join(".git").exists() {
            git(&path, &["checkout", "--quiet", "--detach", "--force", sha])?;
        } else {
            // A worktree directory deleted by hand leaves a stale registration behind.
            git(&self.mirror, &["worktree", "prune"])?;
            let path_str = path.to_string_lossy().into_owned();
            git(
                &self.mirror,
                &[
                    "worktree", "add", "--quiet", "--detach", "--force", &path_str, sha,
                ],
            )?;
        }
        Ok(path)
    }

    fn has_commit(&self, sha: &str) -> bool {
        git(
            &self.mirror,
            &["cat-file", "-e", &format!("{sha}^{{commit}}")],
        )
        .is_ok()
    }
}

/// Runs the build `command` through `sh -c` in `dir` with the scrubbed `env` and returns how
/// long it took. The build is the repository's code, so it gets no more secrets than a run, and
/// with a `sandbox` it can write nothing but `dir` (its worktree) and a private `/tmp`.
pub fn build(
    dir: &Path,
    side: Side,
    command: &str,
    env: &ScrubbedEnv,
    sandbox: Option<&Sandbox>,
) -> Result<Duration, CheckoutError> {
    let shell = ["sh".to_owned(), "-c".to_owned(), command.to_owned()];
    let argv = match sandbox {
        Some(sandbox) => sandbox.argv(dir, &shell),
        None => shell.to_vec(),
    };
    let start = Instant::now();
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .env_clear()
        .envs(env.vars())
        .stdin(Stdio::null())
        .output()
        .map_err(|source| CheckoutError::Spawn {
            program: argv[0].clone(),
            source,
        })?;
    let elapsed = start.elapsed();
    if output.status.success() {
        return Ok(elapsed);
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    Err(CheckoutError::BuildFailed {
        side: side.as_str(),
        command: command.to_owned(),
        status: output.status.to_string(),
        tail: tail_lines(&text, 40),
    })
}

/// The last `n` lines of `text`.
pub fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A directory name for a repository: readable, and unique through a hash of the full URL.
fn dir_name(clone_url: &str) -> String {
    let readable: String = clone_url
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .rsplit(['/', ':'])
        .next()
        .unwrap_or("repo")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    // FNV-1a: stable across runs and Rust versions, unlike `DefaultHasher`.
    let hash = clone_url.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{readable}-{hash:016x}")
}

fn git(dir: &Path, args: &[&str]) -> Result<String, CheckoutError> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        // Never block on a credential prompt: the agent runs unattended.
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .map_err(|source| CheckoutError::Spawn {
            program: "git".into(),
            source,
        })?;
    if !output.status.success() {
        return Err(CheckoutError::Git {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, script: &str) -> String {
        let out = Command::new("sh")
            .args(["-c", script])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    const COMMIT: &str = "git -c user.name=t -c user.email=t@t commit -qam";

    #[test]
    fn worktrees_follow_the_shas_and_keep_ignored_build_output() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        sh(
            &repo,
            &format!(
                "git init -q && echo target > .gitignore && echo 1 > n && git add . && {COMMIT} one"
            ),
        );
        let one = sh(&repo, "git rev-parse HEAD");
        sh(&repo, &format!("echo 2 > n && {COMMIT} two"));
        let two = sh(&repo, "git rev-parse HEAD");

        let work = tmp.path().join("work");
        let checkout = Checkout::new(&work, repo.to_str().unwrap());
        checkout.fetch(&[&one, &two]).unwrap();
        let base = checkout.worktree(Side::Base, &one).unwrap();
        let env = ScrubbedEnv::from_parent(&[]).unwrap();
        build(
            &base,
            Side::Base,
            "mkdir -p target && cp n target/built",
            &env,
            None,
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(base.join("n")).unwrap(), "1\n");

        // A later commit of the source repository is fetched into the cached mirror.
        sh(&repo, &format!("echo 3 > n && {COMMIT} three"));
        let three = sh(&repo, "git rev-parse HEAD");
        checkout.fetch(&[&three]).unwrap();
        let again = checkout.worktree(Side::Base, &three).unwrap();
        assert_eq!(again, base);
        assert_eq!(std::fs::read_to_string(base.join("n")).unwrap(), "3\n");
        assert!(
            base.join("target/built").exists(),
            "ignored build output is kept"
        );
    }

    #[test]
    fn a_failed_build_reports_its_output_tail() {
        let tmp = tempfile::tempdir().unwrap();
        let env = ScrubbedEnv::from_parent(&[]).unwrap();
        let err = build(
            tmp.path(),
            Side::Head,
            "echo compiling; echo 'error: nope' >&2; exit 3",
            &env,
            None,
        )
        .unwrap_err();
        assert!(err.log_tail().contains("error: nope"), "{err}");
        assert!(err.to_string().contains("head build"), "{err}");
    }
}
