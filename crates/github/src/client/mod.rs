//! The GitHub API client: authentication (GitHub App or one token), the base URL, and one
//! request path that turns every answer into data or a [`GitHubError`] the outbox can act on.
//!
//! octocrab does the HTTP, the App JWT and the headers; the calls and their answers use our own
//! small types. octocrab's retries are off: the outbox owns retrying, with its backoff.

mod error;
mod manifest;
mod ops;
mod types;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use http::{HeaderMap, Method, StatusCode, header};
use octocrab::Octocrab;
use octocrab::service::middleware::retry::RetryConfig;
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use error::{DEFAULT_RATE_LIMIT_WAIT, GitHubError};
pub use manifest::convert_manifest_code;
pub use ops::MAX_COMPARED_COMMITS;
pub use types::{
    Account, AppRef, BranchPoint, ChangedFile, CheckConclusion, CheckRun, CheckRunOutput,
    CheckRunRequest, CheckRunUpdate, CheckStatus, CommentUpsert, CommitState, CommitStatusRequest,
    ComparedCommit, Identity, Issue, IssueComment, ListedCheckRun, Permission, comment_marker,
};

/// api.github.com; GitHub Enterprise uses `https://HOST/api/v3`.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// Installation tokens live an hour; renew this long before expiry so no call carries a token
/// that expires in flight.
pub const TOKEN_RENEW_BEFORE_EXPIRY: Duration = Duration::from_secs(5 * 60);

const JSON: &str = "application/vnd.github+json";

/// How benchgate authenticates. `Debug` masks the key and the token.
#[derive(Clone)]
pub enum Auth {
    /// A GitHub App: its id and PEM private key; installation tokens are minted per installation.
    App {
        /// The App id.
        app_id: u64,
        /// The PEM private key (PKCS#1 or PKCS#8 RSA).
        private_key_pem: SecretString,
    },
    /// One token (personal or fine-grained) for a single-repository setup.
    Token(SecretString),
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::App { app_id, .. } => {
                write!(f, "App {{ app_id: {app_id}, private_key_pem: <masked> }}")
            }
            Self::Token(_) => f.write_str("Token(<masked>)"),
        }
    }
}

/// Where and how to reach GitHub.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// REST API base URL, e.g. [`DEFAULT_API_URL`], `https://ghe.example/api/v3`, or a fake.
    pub api_url: String,
    /// Credentials.
    pub auth: Auth,
    /// Per-request timeout (connect and read each).
    pub timeout: Duration,
}

impl ClientConfig {
    /// api.github.com with a 30 s timeout.
    pub fn new(auth: Auth) -> Self {
        Self {
            api_url: DEFAULT_API_URL.to_owned(),
            auth,
            timeout: Duration::from_secs(30),
        }
    }
}

/// A repository the client acts on, with the installation whose token may touch it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RepoTarget {
    /// Required with App auth; ignored with a single token.
    pub installation_id: Option<u64>,
    /// Owner (user or organisation).
    pub owner: String,
    /// Repository name.
    pub name: String,
}

impl RepoTarget {
    /// From `owner/name` as webhooks spell it.
    pub fn new(installation_id: Option<u64>, full_name: &str) -> Result<Self, GitHubError> {
        match full_name.split_once('/') {
            Some((owner, name)) if !owner.is_empty() && !name.is_empty() && !name.contains('/') => {
                Ok(Self {
                    installation_id,
                    owner: owner.to_owned(),
                    name: name.to_owned(),
                })
            }
            _ => Err(GitHubError::Config(format!(
                "repository must be owner/name, got {full_name:?}"
            ))),
        }
    }

    /// `/repos/{owner}/{name}`.
    fn path(&self) -> String {
        format!("/repos/{}/{}", self.owner, self.name)
    }
}

/// The GitHub client; cheap to clone, shared by all outbox workers.
#[derive(Clone)]
pub struct GitHubClient {
    inner: Arc<Inner>,
}

struct Inner {
    /// Authenticated as the App (JWT) in App mode; unauthenticated in token mode.
    octo: Octocrab,
    mode: Mode,
    /// Path prefix of the base URL (`/api/v3` on Enterprise) to strip from pagination links.
    base_path: String,
}

enum Mode {
    App {
        app_id: u64,
        // One lock for all installations: token exchanges are rare, and holding it while one
        // is in flight means concurrent callers wait for that token instead of minting more.
        tokens: tokio::sync::Mutex<HashMap<u64, InstallationToken>>,
    },
    Token {
        octo: Octocrab,
        /// The token's login, asked once (`GET /user`).
        login: tokio::sync::OnceCell<String>,
    },
}

#[derive(Clone)]
struct InstallationToken {
    octo: Octocrab,
    expires_at: DateTime<Utc>,
}

impl fmt::Debug for GitHubClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.inner.mode {
            Mode::App { .. } => "app",
            Mode::Token { .. } => "token",
        };
        f.debug_struct("GitHubClient")
            .field("auth", &mode)
            .finish_non_exhaustive()
    }
}

/// A successful answer: status, headers and body text.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl GitHubClient {
    /// Builds the client; fails on a malformed URL or private key (no network call).
    pub fn new(config: ClientConfig) -> Result<Self, GitHubError> {
        let api_url = config.api_url.trim_end_matches('/');
        let uri: http::Uri = api_url
            .parse()
            .map_err(|e| GitHubError::Config(format!("API URL {api_url:?}: {e}")))?;
        let base_path = uri.path().trim_end_matches('/').to_owned();
        let builder = Octocrab::builder()
            .base_uri(api_url)
            .map_err(|e| GitHubError::Config(format!("API URL {api_url:?}: {e}")))?
            .add_retry_config(RetryConfig::None)
            .set_connect_timeout(Some(config.timeout))
            .set_read_timeout(Some(config.timeout));
        let (octo, mode) = match config.auth {
            Auth::App {
                app_id,
                private_key_pem,
            } => {
                let octo = builder
                    .app_from_rsa_pem(app_id.into(), private_key_pem.expose_secret().as_bytes())
                    .map_err(|_| {
                        GitHubError::Config("the App private key is not a valid RSA PEM".into())
                    })?
                    .build()
                    .map_err(|e| GitHubError::Config(e.to_string()))?;
                let tokens = tokio::sync::Mutex::new(HashMap::new());
                (octo, Mode::App { app_id, tokens })
            }
            Auth::Token(token) => {
                let octo = builder
                    .build()
                    .map_err(|e| GitHubError::Config(e.to_string()))?;
                let with_token = octo
                    .user_access_token(token)
                    .map_err(|e| GitHubError::Config(e.to_string()))?;
                let login = tokio::sync::OnceCell::new();
                (
                    octo,
                    Mode::Token {
                        octo: with_token,
                        login,
                    },
                )
            }
        };
        Ok(Self {
            inner: Arc::new(Inner {
                octo,
                mode,
                base_path,
            }),
        })
    }

    /// True for a GitHub App; only Apps may write check runs (a token writes commit statuses).
    pub fn is_app(&self) -> bool {
        matches!(self.inner.mode, Mode::App { .. })
    }

    /// Who this client writes as. A token's login is asked once (`GET /user`).
    pub async fn identity(&self) -> Result<Identity, GitHubError> {
        match &self.inner.mode {
            Mode::App { app_id, .. } => Ok(Identity::App(*app_id)),
            Mode::Token { octo, login } => {
                #[derive(serde::Deserialize)]
                struct User {
                    login: String,
                }
                let login = login
                    .get_or_try_init(|| async {
                        let answer = self
                            .send(octo, Method::GET, "/user", None::<&()>, JSON)
                            .await?;
                        let user: User = decode(&Method::GET, "/user", &answer.body)?;
                        Ok::<_, GitHubError>(user.login)
                    })
                    .await?;
                Ok(Identity::User(login.clone()))
            }
        }
    }

    /// The octocrab instance authorised for `target`, minting an installation token if the
    /// cached one is missing or about to expire.
    async fn octo_for(&self, target: &RepoTarget) -> Result<Octocrab, GitHubError> {
        let tokens = match &self.inner.mode {
            Mode::Token { octo, .. } => return Ok(octo.clone()),
            Mode::App { tokens, .. } => tokens,
        };
        let id = target.installation_id.ok_or_else(|| {
            GitHubError::Config(format!(
                "no installation id for {}/{} (App auth needs one)",
                target.owner, target.name
            ))
        })?;
        let mut tokens = tokens.lock().await;
        let renew_at = Utc::now() + TOKEN_RENEW_BEFORE_EXPIRY;
        if let Some(t) = tokens.get(&id).filter(|t| t.expires_at > renew_at) {
            return Ok(t.octo.clone());
        }
        let token = self.mint_installation_token(id).await?;
        tokens.insert(id, token.clone());
        Ok(token.octo)
    }

    async fn mint_installation_token(&self, id: u64) -> Result<InstallationToken, GitHubError> {
        #[derive(serde::Deserialize)]
        struct TokenAnswer {
            // Wrapped into a SecretString at once; this struct is never logged.
            token: String,
            expires_at: DateTime<Utc>,
        }
        let path = format!("/app/installations/{id}/access_tokens");
        let answer = self
            .send(
                &self.inner.octo,
                Method::POST,
                &path,
                Some(&serde_json::json!({})),
                JSON,
            )
            .await?;
        let t: TokenAnswer = decode(&Method::POST, &path, &answer.body)?;
        let octo = self
            .inner
            .octo
            .user_access_token(SecretString::from(t.token))
            .map_err(|e| GitHubError::Config(e.to_string()))?;
        tracing::debug!(installation = id, expires_at = %t.expires_at, "minted installation token");
        Ok(InstallationToken {
            octo,
            expires_at: t.expires_at,
        })
    }

    /// Forgets an installation's token (after a 401, so the next call mints a new one).
    async fn forget_token(&self, target: &RepoTarget) {
        if let (Mode::App { tokens, .. }, Some(id)) = (&self.inner.mode, target.installation_id) {
            tokens.lock().await.remove(&id);
        }
    }

    /// Sends one request for `target` and returns the answer if its status is a success.
    async fn call<B: Serialize + ?Sized>(
        &self,
        target: &RepoTarget,
        method: Method,
        path: &str,
        body: Option<&B>,
        accept: &str,
    ) -> Result<Answer, GitHubError> {
        let octo = self.octo_for(target).await?;
        let result = self.send(&octo, method, path, body, accept).await;
        if let Err(GitHubError::Status { status: 401, .. }) = &result {
            self.forget_token(target).await;
        }
        result
    }

    /// Like [`Self::call`], decoding the JSON body.
    async fn call_json<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        target: &RepoTarget,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, GitHubError> {
        let answer = self.call(target, method.clone(), path, body, JSON).await?;
        decode(&method, path, &answer.body)
    }

    async fn send<B: Serialize + ?Sized>(
        &self,
        octo: &Octocrab,
        method: Method,
        path: &str,
        body: Option<&B>,
        accept: &str,
    ) -> Result<Answer, GitHubError> {
        let transport = |message: String| GitHubError::Transport {
            method: method.to_string(),
            path: path.to_owned(),
            message,
        };
        let request = http::Request::builder()
            .method(method.clone())
            .uri(path)
            .header(header::ACCEPT, accept);
        let request = octo
            .build_request(request, body)
            .map_err(|e| GitHubError::Config(e.to_string()))?;
        let response = octo
            .execute(request)
            .await
            .map_err(|e| transport(e.to_string()))?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = octo
            .body_to_string(response)
            .await
            .map_err(|e| transport(e.to_string()))?;
        if status.is_success() {
            return Ok(Answer {
                status,
                headers,
                body,
            });
        }
        let message = error_message(&body);
        let (mut retryable, retry_after) = error::classify(status, &headers, &message, Utc::now());
        // An installation token can be revoked or expire early; a fresh one may well work.
        if status == StatusCode::UNAUTHORIZED && matches!(self.inner.mode, Mode::App { .. }) {
            retryable = true;
        }
        tracing::debug!(%method, path, status = status.as_u16(), retryable, "GitHub call failed");
        Err(GitHubError::Status {
            status: status.as_u16(),
            method: method.to_string(),
            path: path.to_owned(),
            message,
            retryable,
            retry_after,
        })
    }

    /// Turns a `Link: <...>; rel="next"` URL into a path our base URL can be put in front of.
    fn next_page(&self, headers: &HeaderMap) -> Option<String> {
        let link = headers.get(header::LINK)?.to_str().ok()?;
        let next = link.split(',').find(|part| part.contains("rel=\"next\""))?;
        let url = next.split(['<', '>']).nth(1)?;
        let uri: http::Uri = url.parse().ok()?;
        let pq = uri.path_and_query()?.as_str();
        Some(
            pq.strip_prefix(self.inner.base_path.as_str())
                .unwrap_or(pq)
                .to_owned(),
        )
    }
}

/// GitHub's `{"message": ...}`, or the start of whatever else it sent.
fn error_message(body: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Message {
        message: String,
    }
    match serde_json::from_str::<Message>(body) {
        Ok(m) => m.message,
        Err(_) => body.chars().take(200).collect(),
    }
}

fn decode<T: DeserializeOwned>(method: &Method, path: &str, body: &str) -> Result<T, GitHubError> {
    let de = &mut serde_json::Deserializer::from_str(body);
    serde_path_to_error::deserialize(de).map_err(|e| GitHubError::Decode {
        method: method.to_string(),
        path: path.to_owned(),
        message: format!("at `{}`: {}", e.path(), e.inner()),
    })
}
