//! The hostile-PR suite: one test per attack a PR's code was found to make on its runner, each
//! against the real server and a real agent with bubblewrap, on a real git repository. Each
//! asserts that the attack fails **and** that an honest job beside it still measures: a
//! `.git` of the PR's own (hooks, alternates into the mirror with the work tree redirected,
//! fsmonitor) that the agent's next checkout would have obeyed outside the sandbox; build output
//! left for the next PR and for the base side; reads of the agent's token file and of the
//! credentials under its home; a gibibyte of build or run output; and a failure that prints the
//! words of a machine fault to be run again.
//!
//! Without a working bwrap each test skips with the reason printed; in CI (`CI` set) it fails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::agent::{
    AgentProcess, BASE_ITERATIONS, BenchRepo, HEAD_ITERATIONS, TokenVia, add_runner, bwrap_works,
    create_comparison, spawn_server_at, wait_finished, write_token_file,
};
use crate::support::{Server, git, measuring_turn};
use benchgate_api::agent::{ComparisonStatus, CreateComparisonRequest};
use benchgate_api::{BenchmarkResult, VerdictKind};

/// `build.sh` of every project here: an incremental build in miniature. It reuses what an
/// earlier build left in `cache/` (as cargo reuses `target/`), then runs the PR's `attack.sh`.
const BUILD: &str = "if [ -f cache/iterations ]; then cp cache/iterations iterations.used; \
                     else cp iterations iterations.used; fi\n\
                     if [ -f attack.sh ]; then sh attack.sh build || exit 1; fi\n";
/// `bench.sh`: the PR's `attack.sh` again, then the work the build chose.
const BENCH: &str = "#!/bin/sh\nif [ -f attack.sh ]; then sh attack.sh run || exit 1; fi\n\
                     exec \"$BENCHGATE_BIN\" spin --iterations \"$(cat iterations.used)\"\n";

/// A server, a runner's token and its sandboxed agent, in a directory outside `/tmp` (which the
/// sandbox replaces anyway: the hiding must be what protects these files).
struct Range {
    dir: tempfile::TempDir,
    db: String,
    server: Server,
    agent: AgentProcess,
    token: String,
    /// A directory the agent can write and PR code cannot: where an attack that got out of
    /// the sandbox would leave its mark.
    outside: PathBuf,
}

impl Range {
    /// The token in a file the operator did not list in `--sandbox-hide`, and `home` as the
    /// agent's `HOME`.
    fn start(name: &str, home: Option<&Path>) -> Range {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let db = format!("sqlite://{}", dir.path().join("benchgate.db").display());
        let server = spawn_server_at("127.0.0.1:0", &db, 30);
        let token = add_runner(&db, name);
        let secrets = dir.path().join("secrets");
        std::fs::create_dir_all(&secrets).unwrap();
        let token_file = secrets.join("runner.token");
        write_token_file(&token_file, &token, 0o600);
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(outside.join("redirected")).unwrap();
        let env: Vec<(&str, &Path)> = home.map(|h| ("HOME", h)).into_iter().collect();
        let agent = AgentProcess::spawn_with_env(
            name,
            &server.url(""),
            TokenVia::File(&token_file),
            dir.path(),
            &["--sandbox", "bwrap"],
            &env,
        );
        Range {
            dir,
            db,
            server,
            agent,
            token,
            outside,
        }
    }

    fn token_file(&self) -> PathBuf {
        self.dir.path().join("secrets/runner.token")
    }

    /// Runs `req` to its end on this range's agent.
    async fn compare(&self, req: &CreateComparisonRequest) -> ComparisonStatus {
        let created = create_comparison(&self.server, req).await;
        wait_finished(
            &self.server,
            created.id,
            Duration::from_secs(120),
            &[&self.agent],
        )
        .await
    }

    /// The marks an attack left outside the sandbox, by file name.
    fn marks(&self) -> Vec<String> {
        let mut found: Vec<String> = walk(&self.outside)
            .into_iter()
            .map(|p| p.strip_prefix(&self.outside).unwrap().display().to_string())
            .collect();
        found.sort();
        found
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A project whose base does [`BASE_ITERATIONS`] of work.
struct Project {
    path: PathBuf,
    base: String,
}

impl Project {
    fn create(dir: &Path) -> Project {
        let path = dir.join("project");
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("build.sh"), BUILD).unwrap();
        std::fs::write(path.join("bench.sh"), BENCH).unwrap();
        std::fs::write(
            path.join(".gitignore"),
            "cache/\niterations.used\nattack-*.log\nprinted\n",
        )
        .unwrap();
        std::fs::write(path.join("iterations"), BASE_ITERATIONS.to_string()).unwrap();
        git(&path, &["init", "-q"]);
        git(&path, &["add", "."]);
        git(&path, &["commit", "-qm", "base"]);
        let base = git(&path, &["rev-parse", "HEAD"]);
        Project { path, base }
    }

    /// A PR's head on top of base: `iterations` of work and `attack` as its `attack.sh` (none
    /// when empty).
    fn head(&self, name: &str, iterations: u64, attack: &str) -> String {
        git(&self.path, &["checkout", "-q", "--detach", &self.base]);
        std::fs::write(self.path.join("iterations"), iterations.to_string()).unwrap();
        std::fs::write(self.path.join("README"), name).unwrap();
        if !attack.is_empty() {
            std::fs::write(self.path.join("attack.sh"), attack).unwrap();
        }
        git(&self.path, &["add", "."]);
        git(&self.path, &["commit", "-qm", name]);
        git(&self.path, &["rev-parse", "HEAD"])
    }

    fn comparison(&self, head: &str, rounds: u32) -> CreateComparisonRequest {
        let repo = BenchRepo {
            path: self.path.clone(),
            base: self.base.clone(),
            head: head.to_owned(),
        };
        let mut req = repo.comparison(rounds, Vec::new());
        req.config.benchmark.build = Some("sh build.sh".into());
        req
    }
}

fn cpu_time(status: &ComparisonStatus) -> BenchmarkResult {
    let headline = status
        .runners
        .iter()
        .find(|r| r.headline)
        .expect("a headline runner");
    headline
        .report
        .benchmarks
        .iter()
        .find(|b| b.name == "command" && b.metric == "cpu_time")
        .cloned()
        .expect("a cpu_time result")
}

/// An honest head three times slower than base, after an attack: the runner still measures it
/// so (the process start-up is shared and the machine may be loaded: above +50%, not +200%).
async fn honest_head_still_measures(range: &Range, project: &Project) {
    let honest = project.head("honest", HEAD_ITERATIONS, "");
    let status = range.compare(&project.comparison(&honest, 6)).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", range.agent.logs());
    assert_measured_three_times_the_work(&status);
}

fn assert_measured_three_times_the_work(status: &ComparisonStatus) {
    let cpu = cpu_time(status);
    assert!(cpu.change_pct.is_some_and(|p| p > 50.0), "{cpu:?}");
    assert_ne!(cpu.verdict, VerdictKind::Faster, "{cpu:?}");
}

/// The head's build replaces its tree's `.git` with a git dir of its own (`git_dir` writes it);
/// the agent's next job on that tree must not run anything it names, outside the sandbox.
async fn git_dir_attack(name: &str, git_dir: &str) {
    let _turn = measuring_turn().await;
    if !bwrap_works() {
        return;
    }
    let range = Range::start(name, None);
    let project = Project::create(range.dir.path());
    let (outside, token_file) = (range.outside.display(), range.token_file());
    let attack = format!(
        "[ \"$1\" = build ] || exit 0\n\
         rm -rf .git && mkdir -p .git/hooks .git/objects/info .git/refs/heads\n\
         echo 'ref: refs/heads/main' > .git/HEAD\n\
         echo \"$PWD/../mirror.git/objects\" > .git/objects/info/alternates\n\
         mark() {{ printf '#!/bin/sh\\necho \"%s $0\" >> {outside}/%s\\ncat {token} >> {outside}/%s 2>&1\\n' \
         \"$1\" \"$1\" \"$1\" > \"$2\"; chmod +x \"$2\"; }}\n\
         {git_dir}\n",
        token = token_file.display(),
        git_dir = git_dir.replace("OUTSIDE", &outside.to_string()),
    );
    let hostile = project.head("hostile", BASE_ITERATIONS, &attack);
    let status = range.compare(&project.comparison(&hostile, 4)).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", range.agent.logs());

    // The next job lays the head's side out again: the old agent ran `git checkout` there.
    honest_head_still_measures(&range, &project).await;
    assert_eq!(
        range.marks(),
        Vec::<String>::new(),
        "the PR's git dir ran code or wrote outside the sandbox"
    );
}

#[tokio::test]
async fn a_git_dir_with_hooks_left_in_the_tree_never_runs_them() {
    git_dir_attack(
        "hooks",
        "for h in post-checkout reference-transaction post-index-change pre-auto-gc; do \
         mark hooked .git/hooks/$h; done",
    )
    .await;
}

#[tokio::test]
async fn alternates_into_the_mirror_and_a_redirected_work_tree_are_never_followed() {
    // With the mirror's objects as alternates, the PR's git dir can check out any commit; its
    // `core.worktree` would send that checkout's files to a directory outside the sandbox.
    git_dir_attack(
        "alternates",
        "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tworktree = %s\\n' \
         OUTSIDE/redirected > .git/config",
    )
    .await;
}

#[tokio::test]
async fn a_git_config_naming_an_fsmonitor_or_hooks_path_is_never_obeyed() {
    git_dir_attack(
        "fsmonitor",
        "mark fsmonitor .git/fsmon; mkdir -p .git/elsewhere; mark hookspath .git/elsewhere/post-checkout\n\
         printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = %s/.git/fsmon\\n\\thooksPath = %s/.git/elsewhere\\n' \
         \"$PWD\" \"$PWD\" > .git/config",
    )
    .await;
}

/// A PR's build leaves a poisoned cache in both trees (the base side builds its benchmark file,
/// `bench_from_head`): the base side made ten times slower, the head side far faster. The next
/// PR, an honest one that changes nothing that runs, must measure no change.
#[tokio::test]
async fn build_output_a_pr_leaves_reaches_neither_the_next_pr_nor_the_base_side() {
    let _turn = measuring_turn().await;
    if !bwrap_works() {
        return;
    }
    let range = Range::start("poison", None);
    let project = Project::create(range.dir.path());
    let attack = format!(
        "[ \"$1\" = build ] || exit 0\nmkdir -p cache\n\
         case \"$PWD\" in */base) echo {slow} > cache/iterations ;; *) echo 1000 > cache/iterations ;; esac\n",
        slow = BASE_ITERATIONS * 10
    );
    let hostile = project.head("hostile", BASE_ITERATIONS, &attack);
    let mut req = project.comparison(&hostile, 4);
    req.config.benchmark.bench_from_head = vec!["attack.sh".into()];
    let status = range.compare(&req).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", range.agent.logs());

    let same = project.head("docs only", BASE_ITERATIONS, "");
    let status = range.compare(&project.comparison(&same, 6)).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", range.agent.logs());
    let cpu = cpu_time(&status);
    assert!(
        cpu.change_pct.is_some_and(|p| p.abs() < 50.0),
        "the earlier PR's cache changed this one's measurement: {cpu:?}"
    );
    assert_ne!(cpu.verdict, VerdictKind::Faster, "{cpu:?}");
    honest_head_still_measures(&range, &project).await;
}

/// The agent's token file (not named in `--sandbox-hide`) and the credentials in its home
/// directory are read by the head's build, then by a run: each read must find nothing.
#[tokio::test]
async fn the_token_file_and_the_home_credentials_are_hidden_from_pr_code() {
    let _turn = measuring_turn().await;
    if !bwrap_works() {
        return;
    }
    let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let secrets = [
        (".ssh/id_ed25519", "PRIVATE-KEY-never-read"),
        (".git-credentials", "https://bot:ghp_never_read@github.com"),
        (
            ".cargo/credentials.toml",
            "[registry]\ntoken = \"cio_never_read\"",
        ),
        (".netrc", "machine example.com password netrc_never_read"),
    ];
    for (file, secret) in secrets {
        let path = home.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, secret).unwrap();
    }
    let range = Range::start("secrets", Some(home.path()));
    let project = Project::create(range.dir.path());
    let mut reads = format!("{}", range.token_file().display());
    for (file, _) in secrets {
        reads.push_str(&format!(" {}/{file}", home.path().display()));
    }
    // What each read found goes to the failing step's output, which the job's log tail keeps.
    for phase in ["build", "run"] {
        let attack = format!(
            "[ \"$1\" = {phase} ] || exit 0\n\
             for f in {reads}; do echo \"read $f: [$(cat \"$f\" 2>&1)]\" >&2; done\nexit 1\n"
        );
        let hostile = project.head(&format!("hostile {phase}"), HEAD_ITERATIONS, &attack);
        let status = range.compare(&project.comparison(&hostile, 4)).await;
        assert_eq!(status.state, "failed", "{status:?}\n{}", range.agent.logs());
        let jobs = job_rows(&range.db, status.id).await;
        let tail = &jobs[0].3;
        for (file, _) in secrets {
            assert!(
                tail.contains(file),
                "the {phase} did not try {file}:\n{tail}"
            );
        }
        assert!(
            !tail.contains(&range.token),
            "the {phase} read the token:\n{tail}"
        );
        for (file, secret) in secrets {
            assert!(!tail.contains(secret), "the {phase} read {file}:\n{tail}");
        }
    }
    honest_head_still_measures(&range, &project).await;
}

/// A build that prints a gibibyte and fails, then a run that prints a gibibyte: the agent keeps
/// the tail of each and says how much there was; its own memory stays under 64 MiB.
#[tokio::test]
async fn a_gibibyte_of_build_or_run_output_leaves_the_agents_memory_flat() {
    let _turn = measuring_turn().await;
    if !bwrap_works() {
        return;
    }
    let range = Range::start("chatty", None);
    let project = Project::create(range.dir.path());
    let gib = 1u64 << 30;
    let build = format!(
        "[ \"$1\" = build ] || exit 0\nyes 'warning: a chatty build' | head -c {gib}\n\
         echo 'error: the real failure' >&2\nexit 1\n"
    );
    let failing = project.head("chatty build", BASE_ITERATIONS, &build);
    let status = range.compare(&project.comparison(&failing, 4)).await;
    assert_eq!(status.state, "failed", "{status:?}\n{}", range.agent.logs());
    let errors = job_rows(&range.db, status.id).await;
    let (_, attempts, error, tail) = &errors[0];
    assert_eq!(*attempts, 1, "{errors:?}");
    assert!(error.contains("head build"), "{error}");
    assert!(
        tail.starts_with("(it printed 1.0 GiB; the last 40 lines)"),
        "{tail}"
    );
    assert!(tail.ends_with("error: the real failure"), "{tail}");

    // One run of head prints a gibibyte on each stream, then measures as usual.
    let run = format!(
        "[ \"$1\" = run ] || exit 0\n[ -e printed ] && exit 0\n: > printed\n\
         yes 'a chatty run' | head -c {gib}\nyes 'a chatty run' | head -c {gib} >&2\n"
    );
    let chatty = project.head("chatty run", HEAD_ITERATIONS, &run);
    let status = range.compare(&project.comparison(&chatty, 6)).await;
    assert_eq!(status.state, "done", "{status:?}\n{}", range.agent.logs());
    assert_measured_three_times_the_work(&status);
    let peak = range.agent.peak_rss();
    eprintln!(
        "the agent's peak RSS after 3 GiB of output: {} MiB",
        peak >> 20
    );
    assert!(
        peak < 64 << 20,
        "the agent's peak RSS was {} MiB",
        peak >> 20
    );
}

/// A failing build that prints what a full disk would make it print must fail once, as the
/// code's fault: neither be run again nor blamed on the runner.
#[tokio::test]
async fn a_pr_that_prints_a_machine_faults_words_fails_once_as_its_own_fault() {
    let _turn = measuring_turn().await;
    if !bwrap_works() {
        return;
    }
    let range = Range::start("fault", None);
    let project = Project::create(range.dir.path());
    let attack = "[ \"$1\" = build ] || exit 0\n\
                  echo 'cannot write: No space left on device'\n\
                  echo 'stopped with its worktree'\"'\"'s disk nearly full (1.0 GiB kept free)' >&2\n\
                  exit 1\n";
    let hostile = project.head("hostile", BASE_ITERATIONS, attack);
    let status = range.compare(&project.comparison(&hostile, 4)).await;
    assert_eq!(status.state, "failed", "{status:?}\n{}", range.agent.logs());
    let jobs = job_rows(&range.db, status.id).await;
    let (state, attempts, error, _) = &jobs[0];
    assert_eq!(
        (state.as_str(), *attempts),
        ("failed", 1),
        "run again as the machine's fault: {jobs:?}"
    );
    assert!(!error.starts_with("interrupted"), "{error}");
    honest_head_still_measures(&range, &project).await;
}

/// Each job of comparison `id`: state, attempts, last error and log tail.
async fn job_rows(database_url: &str, id: i64) -> Vec<(String, i64, String, String)> {
    use sqlx::Connection;
    let mut c = sqlx::SqliteConnection::connect(database_url).await.unwrap();
    sqlx::query_as::<_, (String, i64, String, String)>(
        "SELECT state, attempts, COALESCE(last_error, ''), COALESCE(log_tail, '') FROM jobs \
         WHERE comparison_id = ? ORDER BY id",
    )
    .bind(id)
    .fetch_all(&mut c)
    .await
    .unwrap()
}
