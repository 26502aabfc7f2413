//! The agent's git working area, laid out so that nothing PR code wrote is read by anything that
//! runs outside its sandbox, nor by another commit's build:
//! - one bare mirror per repository (`mirror.git`); every git call names it outright, with hooks
//!   and fsmonitor off ([`Git::bare`]), and never looks for a repository inside a tree;
//! - one tree per side (`base/`, `head/`): the commit's files and nothing else (no `.git`),
//!   written from the mirror with an index kept beside the tree (`base.index`);
//! - a tree is reused only for the very build it holds ([`BuildStamp`], kept beside it): the same
//!   commit, files from head, build command, environment and isolation, so the same code that
//!   wrote it runs there again. Any other job gets a fresh tree: what an earlier build or run left
//!   (outputs, caches, a `.git` of its own) is deleted before anything reads it.
//!
//! Suites that share a label and a build, and added rounds, still build each side once; a new
//! commit builds from scratch.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use benchgate_api::Side;
use benchgate_api::paths::PathGlobs;
use benchgate_harness::capture::{BUILD_TAIL, failure_tail, tails_while};
use benchgate_harness::env::ScrubbedEnv;
use benchgate_harness::git::{Git, GitError};
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
    #[error(transparent)]
    Git(#[from] GitError),
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

    /// The mirror's git, and nothing else's.
    fn git(&self) -> Git {
        Git::bare(&self.mirror)
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
            Git::discover(&self.root).run(&[
                "clone",
                "--mirror",
                "--quiet",
                &self.clone_url,
                &mirror,
            ])?;
        }
        if shas.iter().any(|sha| !self.has_commit(sha)) {
            self.git().run(&["fetch", "--quiet", "--prune", "origin"])?;
        }
        for sha in shas.iter().filter(|sha| !self.has_commit(sha)) {
            // Not on any branch (e.g. a force-pushed PR head): ask for the sha itself.
            let _ = self.git().run(&["fetch", "--quiet", "origin", sha]);
            if !self.has_commit(sha) {
                return Err(CheckoutError::MissingCommit {
                    repository: self.clone_url.clone(),
                    sha: sha.to_string(),
                });
            }
        }
        Ok(())
    }

    fn tree_path(&self, side: Side) -> PathBuf {
        self.root.join(side.as_str())
    }

    fn index_path(&self, side: Side) -> PathBuf {
        self.root.join(format!("{}.index", side.as_str()))
    }

    /// A fresh tree of `side` at `sha`, with `overlay`'s files from head: whatever the old
    /// tree held is deleted first, unread.
    fn fresh_tree(
        &self,
        side: Side,
        sha: &str,
        overlay: Option<&Overlay>,
    ) -> Result<PathBuf, CheckoutError> {
        let tree = self.tree_path(side);
        let index = self.index_path(side);
        remove_tree(&tree)?;
        remove_file(&index)?;
        std::fs::create_dir_all(&tree).map_err(|source| CheckoutError::Spawn {
            program: format!("mkdir {}", tree.display()),
            source,
        })?;
        let git = self.git().work_tree(&tree, &index);
        git.run(&["read-tree", "--reset", "-u", sha])?;
        if let Some(o) = overlay.filter(|o| !o.files.is_empty()) {
            o.files
                .apply(&git, o.head_sha)
                .map_err(CheckoutError::HeadBenchmarks)?;
        }
        Ok(tree)
    }

    /// What the base side at `base_sha` takes from `head_sha` under `globs`.
    pub fn head_benchmarks(
        &self,
        base_sha: &str,
        head_sha: &str,
        globs: &PathGlobs,
    ) -> Result<HeadBenchmarks, CheckoutError> {
        HeadBenchmarks::plan(&self.git(), base_sha, head_sha, globs)
            .map_err(CheckoutError::HeadBenchmarks)
    }

    fn has_commit(&self, sha: &str) -> bool {
        self.git()
            .run(&["cat-file", "-e", &format!("{sha}^{{commit}}")])
            .is_ok()
    }
}

/// Deletes `path` and all below it, never following a link out of it; a tree whose code took
/// away its own permissions (a directory at mode 000) is opened up first.
fn remove_tree(path: &Path) -> Result<(), CheckoutError> {
    let failed = |source| CheckoutError::Spawn {
        program: format!("rm -r {}", path.display()),
        source,
    };
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            open_up(path);
            match std::fs::remove_dir_all(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(failed(e)),
                _ => Ok(()),
            }
        }
    }
}

/// Gives the owner full rights on every directory below `dir` (links are not followed).
fn open_up(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let is_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        open_up(&entry.path());
    }
}

fn remove_file(path: &Path) -> Result<(), CheckoutError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(CheckoutError::Spawn {
            program: format!("rm {}", path.display()),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Head's benchmark files, put into the base side's worktree (`bench_from_head`).
#[derive(Debug, Clone, Copy)]
pub struct Overlay<'a> {
    pub files: &'a HeadBenchmarks,
    pub head_sha: &'a str,
}

/// What a side's tree was last built as, kept beside it (outside the tree, so code run there
/// cannot forge it): the commit (with head's files, if any) and a digest of the build command,
/// environment and isolation. It is removed before the tree is laid afresh, and written only
/// after the build succeeded, so a matching stamp means that build is in place, and the only
/// code that ever ran in the tree is the code about to run there again.
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

    /// Forgets `side`'s last build, before its tree is laid afresh or a build starts.
    pub fn clear_stamp(&self, side: Side) -> Result<(), CheckoutError> {
        remove_file(&self.stamp_path(side))
    }

    /// Removes both trees, their indexes and build stamps, so a tree stopped at the disk limit
    /// leaves nothing of what it wrote; the next job lays both sides out afresh.
    pub fn discard_worktrees(&self) -> Result<(), CheckoutError> {
        for side in [Side::Base, Side::Head] {
            self.clear_stamp(side)?;
            remove_tree(&self.tree_path(side))?;
            remove_file(&self.index_path(side))?;
        }
        Ok(())
    }

    /// Records that `side`'s tree now holds `stamp`'s build.
    pub fn record_stamp(&self, side: Side, stamp: &BuildStamp) -> Result<(), CheckoutError> {
        let path = self.stamp_path(side);
        std::fs::write(&path, &stamp.contents).map_err(|source| CheckoutError::Spawn {
            program: format!("write {}", path.display()),
            source,
        })
    }

    /// `side`'s tree at `sha` (with `overlay`'s files), built with `command` (none: the files
    /// alone). The tree is kept from an earlier job only when that job built exactly this
    /// ([`BuildStamp`]); otherwise it is laid afresh. Returns the build time, `None` when
    /// nothing was built here.
    pub fn built_worktree(
        &self,
        side: Side,
        sha: &str,
        overlay: Option<&Overlay>,
        command: Option<&str>,
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
        let stamp = BuildStamp::new(&tree, command.unwrap_or(""), env, sandbox);
        // A tree deleted by hand is laid out again, and built again.
        if self.tree_path(side).is_dir() && self.is_built(side, &stamp) {
            return Ok((self.tree_path(side), None));
        }
        self.clear_stamp(side)?;
        let dir = self.fresh_tree(side, sha, overlay)?;
        let took = match command {
            Some(command) => {
                // What `artifacts` names is compared after the build: a tracked file of that
                // name is not the build's output.
                let removed =
                    benchgate_harness::artifacts::remove_before_build(&dir, &self.artifacts)?;
                if removed > 0 {
                    tracing::debug!(side = side.as_str(), removed, "tracked outputs removed");
                }
                Some(build(&dir, side, command, env, sandbox, containment)?)
            }
            None => None,
        };
        self.record_stamp(side, &stamp)?;
        Ok((dir, took))
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
    let mut child = cmd.spawn().map_err(spawn_err)?;
    let ((status, disk_stop), stdout, stderr) =
        tails_while(&mut child, BUILD_TAIL, |c| guarded_wait(c, guard.as_ref()))
            .map_err(spawn_err)?;
    let elapsed = start.elapsed();
    // A shell reports a child killed by a signal as 128 + its number.
    let signal = status
        .signal()
        .or_else(|| status.code().filter(|c| *c > 128).map(|c| c - 128));
    let ended = entered.and_then(|e| e.end(signal));
    let contained = disk_stop.or(ended);
    if status.success() && contained.is_none() {
        return Ok(elapsed);
    }
    Err(CheckoutError::BuildFailed {
        side: side.as_str(),
        command: command.to_owned(),
        status: match contained {
            Some(why) => format!("{status}: {why}"),
            None => status.to_string(),
        },
        tail: failure_tail(&stdout, &stderr, 40),
    })
}

/// Waits for `child` while `guard` checks its disk every [`benchgate_harness::disk::EVERY`]; at
/// a breach its process group is killed and the reason comes back with its status.
fn guarded_wait(
    child: &mut std::process::Child,
    guard: Option<&benchgate_harness::disk::DiskGuard>,
) -> std::io::Result<(std::process::ExitStatus, Option<String>)> {
    let Some(guard) = guard else {
        return Ok((child.wait()?, None));
    };
    let mut checked = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok((status, None));
        }
        if checked.elapsed() >= benchgate_harness::disk::EVERY {
            checked = Instant::now();
            if let Some(reason) = guard.breach() {
                if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                }
                return Ok((child.wait()?, Some(reason)));
            }
        }
        // Short naps, so a build's end is seen at once; the disk is read every EVERY.
        std::thread::sleep(Duration::from_millis(20));
    }
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
    fn a_new_commit_gets_a_fresh_tree_with_nothing_an_earlier_build_left() {
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

        let work = tmp.path().join("work");
        let checkout = Checkout::new(&work, repo.to_str().unwrap());
        checkout.fetch(&[&one]).unwrap();
        let env = ScrubbedEnv::from_parent(&[]).unwrap();
        // A build that leaves output, a `.git` of its own and a directory it locked itself out of.
        let cmd = "mkdir -p target/locked && cp n target/built && mkdir .git && \
                   echo 'ref: refs/heads/x' > .git/HEAD && chmod 000 target/locked";
        let (base, took) = checkout
            .built_worktree(Side::Base, &one, None, Some(cmd), &env, Confine::default())
            .unwrap();
        assert!(took.is_some());
        assert!(base.join("target/built").exists());

        // A later commit of the source repository is fetched into the cached mirror, and laid
        // out in a tree of its own files only.
        sh(&repo, &format!("echo 3 > n && {COMMIT} three"));
        let three = sh(&repo, "git rev-parse HEAD");
        checkout.fetch(&[&three]).unwrap();
        let (again, _) = checkout
            .built_worktree(Side::Base, &three, None, None, &env, Confine::default())
            .unwrap();
        assert_eq!(again, base);
        assert_eq!(std::fs::read_to_string(base.join("n")).unwrap(), "3\n");
        let mut left: Vec<_> = std::fs::read_dir(&base)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [".gitignore", "n"],
            "the earlier build's files are gone"
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
                .built_worktree(
                    Side::Base,
                    sha,
                    None,
                    Some(command),
                    env,
                    Confine::default(),
                )
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
            .built_worktree(
                Side::Head,
                &one,
                None,
                Some(cmd),
                &other_env,
                Confine::default(),
            )
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
                    Some(cmd),
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
            .built_worktree(Side::Base, &base, None, Some(cmd), &env, Confine::default())
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
