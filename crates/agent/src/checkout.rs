//! The agent's git working area: one cached mirror clone per repository under the work dir and
//! one worktree per side, reused from job to job and moved with `git checkout --detach`, so
//! ignored build output stays in place and builds are incremental. A job whose two commits,
//! build command and environment equal the previous job's reuses that build ([`BuildStamp`]):
//! suites that share a label and a build, and added rounds, build each side once.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use benchgate_api::Side;
use benchgate_api::paths::PathGlobs;
use benchgate_harness::env::ScrubbedEnv;
use benchgate_harness::limits::Containment;
use benchgate_harness::sandbox::{Sandbox, isolation_name};
use benchgate_harness::worktree::HeadBenchmarks;
use sha2::{Digest, Sha256};

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
    #[error("cannot give the base side head's benchmark files (bench_from_head): {0}")]
    HeadBenchmarks(benchgate_harness::worktree::WorktreeError),
    #[error("bench_from_head: {0}")]
    BenchFromHeadGlob(String),
    /// Outputs `artifacts` names could not be removed before the build: comparing what is
    /// left could call two different builds identical.
    #[error(transparent)]
    Artifacts(#[from] benchgate_harness::artifacts::ArtifactError),
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

/// How PR code is confined: the sandbox (files, network) and the resource limits.
#[derive(Debug, Clone, Copy, Default)]
pub struct Confine<'a> {
    pub sandbox: Option<&'a Sandbox>,
    pub limits: Option<&'a Containment>,
}

/// One repository's cached mirror and its two worktrees.
#[derive(Debug, Clone)]
pub struct Checkout {
    mirror: PathBuf,
    root: PathBuf,
    clone_url: String,
    /// Build outputs (`artifacts`) removed before each build, so what matches after it is
    /// what that build wrote.
    artifacts: benchgate_api::paths::PathGlobs,
}

impl Checkout {
    /// The checkout area of `clone_url` under `work_dir` (nothing is touched yet).
    pub fn new(work_dir: &Path, clone_url: &str) -> Self {
        let root = work_dir.join("repos").join(dir_name(clone_url));
        Checkout {
            mirror: root.join("mirror.git"),
            root,
            clone_url: clone_url.to_owned(),
            artifacts: Default::default(),
        }
    }

    /// The same checkout, removing what `artifacts` names before each build.
    pub fn removing_before_build(mut self, artifacts: benchgate_api::paths::PathGlobs) -> Self {
        self.artifacts = artifacts;
        self
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

    /// The worktree of `side`, moved to `sha` (detached), created on first use; the forced
    /// checkout also undoes an earlier job's [`Overlay`].
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

    /// What the base side at `base_sha` takes from `head_sha` under `globs`.
    pub fn head_benchmarks(
        &self,
        base_sha: &str,
        head_sha: &str,
        globs: &PathGlobs,
    ) -> Result<HeadBenchmarks, CheckoutError> {
        HeadBenchmarks::plan(&self.mirror, base_sha, head_sha, globs)
            .map_err(CheckoutError::HeadBenchmarks)
    }

    /// [`Checkout::worktree`], then head's benchmark files put in when `overlay` says so.
    pub fn worktree_with(
        &self,
        side: Side,
        sha: &str,
        overlay: Option<&Overlay>,
    ) -> Result<PathBuf, CheckoutError> {
        let dir = self.worktree(side, sha)?;
        if let Some(o) = overlay.filter(|o| !o.files.is_empty()) {
            o.files
                .apply(&dir, o.head_sha)
                .map_err(CheckoutError::HeadBenchmarks)?;
        }
        Ok(dir)
    }

    fn has_commit(&self, sha: &str) -> bool {
        git(
            &self.mirror,
            &["cat-file", "-e", &format!("{sha}^{{commit}}")],
        )
        .is_ok()
    }
}

/// Head's benchmark files, put into the base side's worktree (`bench_from_head`).
#[derive(Debug, Clone, Copy)]
pub struct Overlay<'a> {
    pub files: &'a HeadBenchmarks,
    pub head_sha: &'a str,
}

/// What a side's worktree was last built as, kept beside it (outside the worktree, so code run
/// there cannot forge it): the commit and a digest of the build command, environment and
/// isolation. It is removed before the worktree moves or builds, and written only after the
/// build succeeded, so a matching stamp means that build is in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildStamp {
    contents: String,
}

impl BuildStamp {
    /// The stamp building `sha` with `command` in `env` would leave.
    pub fn new(sha: &str, command: &str, env: &ScrubbedEnv, sandbox: Option<&Sandbox>) -> Self {
        let mut digest = Sha256::new();
        for part in [command, isolation_name(sandbox)] {
            digest.update(part.as_bytes());
            digest.update([0]);
        }
        for (name, value) in env.vars() {
            digest.update(format!("{name}={value}").as_bytes());
            digest.update([0]);
        }
        BuildStamp {
            contents: format!("{sha} {}\n", hex::encode(digest.finalize())),
        }
    }
}

impl Checkout {
    fn stamp_path(&self, side: Side) -> PathBuf {
        self.root.join(format!("{}.built", side.as_str()))
    }

    /// Whether `side`'s worktree still holds the build `stamp` describes.
    pub fn is_built(&self, side: Side, stamp: &BuildStamp) -> bool {
        std::fs::read_to_string(self.stamp_path(side)).is_ok_and(|s| s == stamp.contents)
    }

    /// Forgets `side`'s last build, before its worktree moves or a build starts.
    pub fn clear_stamp(&self, side: Side) -> Result<(), CheckoutError> {
        let path = self.stamp_path(side);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(CheckoutError::Spawn {
                program: format!("rm {}", path.display()),
                source: e,
            }),
            _ => Ok(()),
        }
    }

    /// Removes both worktrees and their build stamps, so a tree stopped at the disk limit
    /// leaves nothing of what it wrote; the next job checks both sides out afresh.
    pub fn discard_worktrees(&self) -> Result<(), CheckoutError> {
        for side in [Side::Base, Side::Head] {
            self.clear_stamp(side)?;
            let path = self.root.join(side.as_str());
            match std::fs::remove_dir_all(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(CheckoutError::Spawn {
                        program: format!("rm -r {}", path.display()),
                        source: e,
                    });
                }
                _ => {}
            }
        }
        git(&self.mirror, &["worktree", "prune"]).map(drop)
    }

    /// Records that `side`'s worktree now holds `stamp`'s build.
    pub fn record_stamp(&self, side: Side, stamp: &BuildStamp) -> Result<(), CheckoutError> {
        let path = self.stamp_path(side);
        std::fs::write(&path, &stamp.contents).map_err(|source| CheckoutError::Spawn {
            program: format!("write {}", path.display()),
            source,
        })
    }

    /// `side`'s worktree at `sha` (with `overlay`'s files), built with `command` unless the
    /// last build there was the same ([`BuildStamp`]). Returns the build time, `None` when the
    /// build was reused.
    pub fn built_worktree(
        &self,
        side: Side,
        sha: &str,
        overlay: Option<&Overlay>,
        command: &str,
        env: &ScrubbedEnv,
        confine: Confine<'_>,
    ) -> Result<(PathBuf, Option<Duration>), CheckoutError> {
        let Confine {
            sandbox,
            limits: containment,
        } = confine;
        // The files taken, not the head's sha: a new push that leaves them alone keeps the build.
        let tree = match overlay {
            Some(o) if !o.files.is_empty() => format!("{sha}\n{}", o.files.key()),
            _ => sha.to_owned(),
        };
        let stamp = BuildStamp::new(&tree, command, env, sandbox);
        // A worktree deleted by hand is made again, without its build.
        let exists = self.root.join(side.as_str()).join(".git").exists();
        if exists && self.is_built(side, &stamp) {
            return Ok((self.worktree_with(side, sha, overlay)?, None));
        }
        self.clear_stamp(side)?;
        let dir = self.worktree_with(side, sha, overlay)?;
        // What `artifacts` names is compared after the build: earlier builds' outputs go first.
        let removed = benchgate_harness::artifacts::remove_before_build(&dir, &self.artifacts)?;
        if removed > 0 {
            tracing::debug!(
                side = side.as_str(),
                removed,
                "earlier build outputs removed"
            );
        }
        let took = build(&dir, side, command, env, sandbox, containment)?;
        self.record_stamp(side, &stamp)?;
        Ok((dir, Some(took)))
    }
}

/// Runs the build `command` through `sh -c` in `dir` with the scrubbed `env` and returns how
/// long it took. The build is the repository's code, so it gets no more secrets than a run, and
/// with a `sandbox` it can write nothing but `dir` (its worktree) and a private `/tmp`; the
/// `containment` limits its memory, processes, CPU and file sizes, and kills what it leaves.
pub fn build(
    dir: &Path,
    side: Side,
    command: &str,
    env: &ScrubbedEnv,
    sandbox: Option<&Sandbox>,
    containment: Option<&Containment>,
) -> Result<Duration, CheckoutError> {
    let shell = ["sh".to_owned(), "-c".to_owned(), command.to_owned()];
    let argv = match sandbox {
        Some(sandbox) => sandbox.argv(dir, &shell),
        None => shell.to_vec(),
    };
    let spawn_err = |source| CheckoutError::Spawn {
        program: argv[0].clone(),
        source,
    };
    let entered = containment
        .map(Containment::enter)
        .transpose()
        .map_err(spawn_err)?;
    let guard = containment.and_then(|c| c.disk_guard(dir));
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(dir)
        .env_clear()
        .envs(env.vars())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a disk stop kills the whole build.
        .process_group(0);
    if let Some(setup) = entered.as_ref().map(|e| e.child_setup()) {
        // SAFETY: `apply` makes only async-signal-safe system calls (no allocation, no locks).
        unsafe {
            cmd.pre_exec(move || setup.apply());
        }
    }
    let start = Instant::now();
    let child = cmd.spawn().map_err(spawn_err)?;
    let (output, disk_stop) = guarded_output(child, guard.as_ref()).map_err(spawn_err)?;
    let elapsed = start.elapsed();
    // A shell reports a child killed by a signal as 128 + its number.
    let signal = output
        .status
        .signal()
        .or_else(|| output.status.code().filter(|c| *c > 128).map(|c| c - 128));
    let ended = entered.and_then(|e| e.end(signal));
    let contained = disk_stop.or(ended);
    if output.status.success() && contained.is_none() {
        return Ok(elapsed);
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    Err(CheckoutError::BuildFailed {
        side: side.as_str(),
        command: command.to_owned(),
        status: match contained {
            Some(why) => format!("{}: {why}", output.status),
            None => output.status.to_string(),
        },
        tail: tail_lines(&text, 40),
    })
}

/// `child`'s output, as `Command::output` reads it, while `guard` checks its disk every
/// [`benchgate_harness::disk::EVERY`]; at a breach its process group is killed and the reason
/// comes back with the output.
fn guarded_output(
    mut child: std::process::Child,
    guard: Option<&benchgate_harness::disk::DiskGuard>,
) -> std::io::Result<(std::process::Output, Option<String>)> {
    use std::io::Read;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let read_all = |pipe: Option<&mut dyn Read>| {
        let mut buf = Vec::new();
        if let Some(pipe) = pipe {
            let _ = pipe.read_to_end(&mut buf);
        }
        buf
    };
    std::thread::scope(|scope| {
        let stdout = scope.spawn(|| read_all(out.as_mut().map(|p| p as &mut dyn Read)));
        let stderr = scope.spawn(|| read_all(err.as_mut().map(|p| p as &mut dyn Read)));
        let mut disk_stop = None;
        let mut checked = Instant::now();
        let status = loop {
            let Some(guard) = guard.filter(|_| disk_stop.is_none()) else {
                break child.wait()?;
            };
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if checked.elapsed() >= benchgate_harness::disk::EVERY {
                checked = Instant::now();
                if let Some(reason) = guard.breach() {
                    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                        let _ =
                            rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                    }
                    disk_stop = Some(reason);
                }
            }
            // Short naps, so a build's end is seen at once; the disk is read every EVERY.
            std::thread::sleep(Duration::from_millis(20));
        };
        let output = std::process::Output {
            status,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        };
        Ok((output, disk_stop))
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
    fn a_build_is_reused_only_for_the_same_commit_command_and_environment() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        sh(
            &repo,
            &format!("git init -q && echo 1 > n && git add . && {COMMIT} one"),
        );
        let one = sh(&repo, "git rev-parse HEAD");
        sh(&repo, &format!("echo 2 > n && {COMMIT} two"));
        let two = sh(&repo, "git rev-parse HEAD");
        let checkout = Checkout::new(&tmp.path().join("work"), repo.to_str().unwrap());
        checkout.fetch(&[&one, &two]).unwrap();
        let env = ScrubbedEnv::from_parent(&[]).unwrap();
        let other_env = ScrubbedEnv::from_parent(&["MODE=fast".into()]).unwrap();
        let cmd = "echo x >> built.log";
        let build = |sha: &str, command: &str, env: &ScrubbedEnv| {
            let (_, took) = checkout
                .built_worktree(Side::Base, sha, None, command, env, Confine::default())
                .unwrap();
            took.is_some()
        };
        assert!(build(&one, cmd, &env), "first build");
        assert!(
            !build(&one, cmd, &env),
            "same commit, command and environment"
        );
        assert!(build(&one, "echo y >> built.log", &env), "another command");
        assert!(build(&one, cmd, &other_env), "another environment");
        assert!(build(&two, cmd, &other_env), "another commit");
        assert!(build(&one, cmd, &other_env), "moved away and back");
        assert!(!build(&one, cmd, &other_env));
        // The head side keeps its own stamp.
        let (_, head) = checkout
            .built_worktree(Side::Head, &one, None, cmd, &other_env, Confine::default())
            .unwrap();
        assert!(head.is_some());
        std::fs::remove_dir_all(
            tmp.path()
                .join("work/repos")
                .read_dir()
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .path()
                .join("base"),
        )
        .unwrap();
        assert!(
            build(&one, cmd, &other_env),
            "a deleted worktree is built again"
        );
        // After a disk stop: both worktrees and stamps go, the next build starts afresh.
        checkout.discard_worktrees().unwrap();
        let mut left: Vec<_> = std::fs::read_dir(&checkout.root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["mirror.git"]);
        assert!(build(&one, cmd, &other_env), "discarded, built again");
    }

    #[test]
    fn the_base_builds_with_heads_benchmark_files_and_keeps_the_build_while_they_stay() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        sh(
            &repo,
            &format!(
                "git init -q && mkdir benches && echo b1 > benches/b.rs && echo lib1 > lib && \
                 git add . && {COMMIT} base"
            ),
        );
        let base = sh(&repo, "git rev-parse HEAD");
        sh(
            &repo,
            &format!("echo b2 > benches/b.rs && echo lib2 > lib && {COMMIT} head"),
        );
        let head = sh(&repo, "git rev-parse HEAD");
        sh(&repo, &format!("echo lib3 > lib && {COMMIT} later"));
        let later = sh(&repo, "git rev-parse HEAD");
        let checkout = Checkout::new(&tmp.path().join("work"), repo.to_str().unwrap());
        checkout.fetch(&[&base, &head, &later]).unwrap();
        let globs = PathGlobs::try_from(vec!["benches/**".to_owned()]).unwrap();
        let env = ScrubbedEnv::from_parent(&[]).unwrap();
        let cmd = "cat benches/b.rs lib > built";
        let build_base = |head_sha: &str| {
            let files = checkout.head_benchmarks(&base, head_sha, &globs).unwrap();
            let overlay = Overlay {
                files: &files,
                head_sha,
            };
            let (dir, took) = checkout
                .built_worktree(
                    Side::Base,
                    &base,
                    Some(&overlay),
                    cmd,
                    &env,
                    Confine::default(),
                )
                .unwrap();
            let built = std::fs::read_to_string(dir.join("built")).unwrap();
            let bench = std::fs::read_to_string(dir.join("benches/b.rs")).unwrap();
            (took.is_some(), built, bench)
        };
        assert_eq!(
            build_base(&head),
            (true, "b2\nlib1\n".to_owned(), "b2\n".to_owned()),
            "head's benchmark against base's library"
        );
        // A later head with the same benchmark files keeps the build, files still in place.
        assert_eq!(
            build_base(&later),
            (false, "b2\nlib1\n".to_owned(), "b2\n".to_owned())
        );
        // Without the overlay the base is itself again, and built again.
        let (dir, took) = checkout
            .built_worktree(Side::Base, &base, None, cmd, &env, Confine::default())
            .unwrap();
        assert!(took.is_some());
        assert_eq!(
            std::fs::read_to_string(dir.join("built")).unwrap(),
            "b1\nlib1\n"
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
            None,
        )
        .unwrap_err();
        assert!(err.log_tail().contains("error: nope"), "{err}");
        assert!(err.to_string().contains("head build"), "{err}");
    }
}
