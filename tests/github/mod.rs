//! A fake GitHub for the end-to-end tests, as strict as github.com where benchgate depends on
//! it (see `rules.rs`): App JWT → installation token, tokens on every call, check runs only
//! for Apps, completed check runs final, byte limits, comments editable only by their author,
//! pagination with `Link` (30 per page by default, at most 100), reactions 201 then 200, and
//! failures on demand (500, 429, secondary rate limits). It answers with the recorded bodies in
//! tests/fixtures/github/rest and keeps what it was sent. Every refusal it answers on its own
//! (not injected) is kept too, so a test can assert benchgate never sent what GitHub refuses.
//! Given a real git repository (`serve_repository`), it compares commits from it and refuses
//! check runs and statuses on shas it lacks, as GitHub does (`repository.rs`).

mod repository;
mod repository_tests;
mod rules;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer};

pub const REPO: &str = "Codertocat/Hello-World";
/// The App the fake knows; its key is tests/fixtures/github/test-only-app-key.pem.
pub const APP_ID: u64 = 424242;
/// The App's bot login, as GitHub names it.
pub const BOT_LOGIN: &str = "benchgate-e2e[bot]";
/// The single token of token mode, and the login it belongs to.
pub const TOKEN: &str = "ghp_e2e_test_token";
pub const TOKEN_LOGIN: &str = "benchgate-bot-user";

/// Reads a fixture under tests/fixtures/github.
pub fn fixture(path: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixture_path(path)).unwrap()).unwrap()
}

/// A file under tests/fixtures/github.
pub fn fixture_path(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/github")
        .join(path)
}

/// The App's private key file, for `--github-private-key-file`.
pub fn app_key_file() -> PathBuf {
    fixture_path("test-only-app-key.pem")
}

/// One comment as the fake keeps it.
#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub pr: u64,
    pub body: String,
    /// The login that wrote it (`BOT_LOGIN` for the App).
    pub author: String,
    pub edits: usize,
}

/// One check run as the fake keeps it (its latest state).
#[derive(Debug, Clone)]
pub struct CheckRun {
    pub id: u64,
    /// As created; GitHub keeps a check run's name for its life.
    pub name: String,
    pub head_sha: String,
    pub external_id: Option<String>,
    pub status: String,
    pub conclusion: Option<String>,
    pub title: String,
    /// Every title it was given, oldest first: what a reader saw while it changed.
    pub titles: Vec<String>,
    pub summary: String,
}

/// One issue as the fake keeps it (its latest state).
#[derive(Debug, Clone)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub labels: Vec<String>,
    /// `open` or `closed`.
    pub state: String,
    pub state_reason: Option<String>,
    pub author: String,
    pub edits: usize,
    /// When it was opened or last edited (what `since` filters on).
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// One commit status (token mode).
#[derive(Debug, Clone)]
pub struct Status {
    pub sha: String,
    pub state: String,
    #[allow(
        dead_code,
        reason = "shown in assertion messages ({statuses:#?}); no test compares it"
    )]
    pub description: String,
    pub context: String,
}

/// An injected answer.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// This status, with `Retry-After` seconds when given.
    Status(u16, Option<u64>),
    /// GitHub's secondary rate limit: 403 with its message and `retry-after`.
    SecondaryRateLimit(u64),
}

/// Which calls an injected fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    /// Anything under `/comments` (lists, creates, edits, reactions).
    Comments,
    /// `.benchgate.toml` reads.
    Config,
    /// Check-run writes.
    CheckRuns,
}

/// How benchgate authenticates to the fake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    App,
    Token,
}

#[derive(Default)]
struct State {
    mode: Option<Mode>,
    config: Option<String>,
    /// `.benchgate.toml` per ref, once a test sets any: then only those refs have one, as on
    /// GitHub, where each branch has its own file.
    configs_at: Vec<(String, String)>,
    /// The `ref` of every `.benchgate.toml` read, in order.
    config_reads: Vec<String>,
    comments: Vec<Comment>,
    checks: Vec<CheckRun>,
    issues: Vec<Issue>,
    statuses: Vec<Status>,
    /// (comment id, content, who reacted).
    reactions: Vec<(u64, String, String)>,
    permissions: Vec<(String, String)>,
    faults: Vec<(Calls, Fault)>,
    faults_answered: Vec<Calls>,
    /// Installation tokens issued: (token, installation id).
    tokens: Vec<(String, u64)>,
    /// Refusals the fake answered on its own: (status, `METHOD path`, why).
    refusals: Vec<(u16, String, String)>,
    /// The git repository GitHub holds, once a test serves one: compares come from it, and
    /// check runs and statuses on other shas are refused.
    repository: Option<PathBuf>,
    /// The only shas check runs and statuses may be written on, when a test says so.
    check_shas: Option<Vec<String>>,
    /// Every request received, as `METHOD /path`, in order.
    requests: Vec<String>,
    /// Pull requests a test opened on the served repository: (number, base tip, head); their
    /// files are listed from it.
    pulls: Vec<(u64, String, String)>,
    next_id: u64,
}

/// The fake; cheap to clone (shared state).
#[derive(Clone)]
pub struct FakeGitHub {
    pub server: Arc<MockServer>,
    state: Arc<Mutex<State>>,
}

impl FakeGitHub {
    /// An App-mode fake serving `.benchgate.toml` = `config` on every ref.
    pub async fn start(config: Option<&str>) -> Self {
        Self::start_in(Mode::App, config).await
    }

    /// A fake that benchgate reaches with the single token [`TOKEN`].
    pub async fn start_token(config: Option<&str>) -> Self {
        Self::start_in(Mode::Token, config).await
    }

    async fn start_in(mode: Mode, config: Option<&str>) -> Self {
        let server = MockServer::start().await;
        let state = Arc::new(Mutex::new(State {
            mode: Some(mode),
            config: config.map(str::to_owned),
            next_id: 1000,
            ..State::default()
        }));
        Mock::given(any())
            .respond_with(rules::Responder {
                state: state.clone(),
                base: server.uri(),
            })
            .mount(&server)
            .await;
        FakeGitHub {
            server: Arc::new(server),
            state,
        }
    }

    pub fn url(&self) -> String {
        self.server.uri()
    }

    /// `login` gets `fixture` (e.g. `collaborator-permission.read.200.json`) as permission.
    pub fn set_permission(&self, login: &str, fixture: &str) {
        let mut s = self.state.lock().unwrap();
        s.permissions.push((login.to_owned(), fixture.to_owned()));
    }

    /// The next calls of `calls` get these answers, in order.
    pub fn inject(&self, calls: Calls, faults: &[Fault]) {
        let mut s = self.state.lock().unwrap();
        s.faults.extend(faults.iter().map(|f| (calls, *f)));
    }

    /// The next `.benchgate.toml` reads fail with these answers, in order.
    pub fn fail_config_reads(&self, answers: &[(u16, Option<u64>)]) {
        let faults: Vec<_> = answers.iter().map(|(s, r)| Fault::Status(*s, *r)).collect();
        self.inject(Calls::Config, &faults);
    }

    /// How many injected faults of `calls` were answered.
    pub fn answered(&self, calls: Calls) -> usize {
        let s = self.state.lock().unwrap();
        s.faults_answered.iter().filter(|c| **c == calls).count()
    }

    /// How many injected `.benchgate.toml` failures were answered.
    pub fn config_failures_answered(&self) -> usize {
        self.answered(Calls::Config)
    }

    /// A comment written by someone else on PR `pr`; returns its id.
    pub fn add_comment(&self, pr: u64, author: &str, body: &str) -> u64 {
        let id = {
            let mut s = self.state.lock().unwrap();
            s.next_id += 1;
            s.next_id
        };
        self.add_comment_with_id(id, pr, author, body);
        id
    }

    /// A comment with a given id (one a webhook of the test announces).
    pub fn add_comment_with_id(&self, id: u64, pr: u64, author: &str, body: &str) {
        let mut s = self.state.lock().unwrap();
        s.comments.push(Comment {
            id,
            pr,
            body: body.to_owned(),
            author: author.to_owned(),
            edits: 0,
        });
    }

    /// Serves `text` as `.benchgate.toml` on `git_ref` (a branch name or sha) only.
    pub fn serve_config_at(&self, git_ref: &str, text: &str) {
        let mut s = self.state.lock().unwrap();
        s.configs_at.retain(|(r, _)| r != git_ref);
        s.configs_at.push((git_ref.to_owned(), text.to_owned()));
    }

    /// From now on the repository's commits are those of the git repository at `path`:
    /// `GET compare/{base}...{head}` is answered from it, and a check run or commit status on
    /// a sha it lacks is refused (422 `No commit found for SHA: …`), as GitHub refuses them.
    pub fn serve_repository(&self, path: &Path) {
        let mut s = self.state.lock().unwrap();
        s.repository = Some(path.to_owned());
    }

    /// PR `number` is `head` on a base branch at `base`: `GET pulls/{number}/files` lists the
    /// files of the served repository from their merge base to `head`, as GitHub does.
    pub fn open_pull(&self, number: u64, base: &str, head: &str) {
        let mut s = self.state.lock().unwrap();
        s.pulls.retain(|(n, _, _)| *n != number);
        s.pulls.push((number, base.to_owned(), head.to_owned()));
    }

    /// From now on a check run or commit status on any sha but `shas` is refused (422 `No commit
    /// found for SHA: …`) and kept in [`Self::refusals`]: proves benchgate writes only there.
    pub fn refuse_checks_except(&self, shas: &[&str]) {
        let mut s = self.state.lock().unwrap();
        s.check_shas = Some(shas.iter().map(|sha| (*sha).to_owned()).collect());
    }

    /// The refs `.benchgate.toml` was read at, in order.
    pub fn config_reads(&self) -> Vec<String> {
        self.state.lock().unwrap().config_reads.clone()
    }

    pub fn comments(&self) -> Vec<Comment> {
        self.state.lock().unwrap().comments.clone()
    }

    /// Comments carrying the report marker of `label`, by anyone.
    pub fn report_comments(&self, label: &str) -> Vec<Comment> {
        let marker = format!("<!-- benchgate:{label} -->");
        self.comments()
            .into_iter()
            .filter(|c| c.body.contains(&marker))
            .collect()
    }

    /// Comments the App (or the token's user) wrote carrying `label`'s marker.
    pub fn bot_report_comments(&self, label: &str) -> Vec<Comment> {
        self.report_comments(label)
            .into_iter()
            .filter(|c| c.author == BOT_LOGIN || c.author == TOKEN_LOGIN)
            .collect()
    }

    pub fn checks(&self) -> Vec<CheckRun> {
        self.state.lock().unwrap().checks.clone()
    }

    pub fn issues(&self) -> Vec<Issue> {
        self.state.lock().unwrap().issues.clone()
    }

    pub fn statuses(&self) -> Vec<Status> {
        self.state.lock().unwrap().statuses.clone()
    }

    /// (comment id, content) of every reaction.
    pub fn reactions(&self) -> Vec<(u64, String)> {
        let s = self.state.lock().unwrap();
        s.reactions
            .iter()
            .map(|(id, content, _)| (*id, content.clone()))
            .collect()
    }

    /// Every request received, as `METHOD /path`, in order.
    pub fn requests(&self) -> Vec<String> {
        self.state.lock().unwrap().requests.clone()
    }

    /// What the fake refused on its own: (status, `METHOD path`, why).
    pub fn refusals(&self) -> Vec<(u16, String, String)> {
        self.state.lock().unwrap().refusals.clone()
    }
}

/// What the fake holds and was asked, for the message of a test that waited in vain.
impl fmt::Display for FakeGitHub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.state.lock().unwrap();
        write!(
            f,
            "the fake GitHub holds\ncomments: {:#?}\nchecks: {:#?}\nstatuses: {:#?}\n\
             issues: {:#?}\nrefusals: {:#?}\nrequests: {:?}",
            s.comments, s.checks, s.statuses, s.issues, s.refusals, s.requests
        )
    }
}
