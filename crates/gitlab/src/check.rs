//! `benchgate gitlab check`: before a project's hook is pointed at benchgate, whether the token
//! can do what benchgate will ask of it (the `api` scope, Developer or above for commit
//! statuses, not expired), whether the project's hook sends the events benchgate acts on, and
//! whether an external status check pointing at benchgate is signed.

use crate::client::{DEVELOPER, GitlabClient, GitlabError, HookInfo, ProjectStatusCheck};

/// The path of benchgate's external status check endpoint.
const STATUS_CHECK_PATH: &str = "/webhooks/gitlab/status-check";

/// Maintainer: the level at which GitLab lists a project's hooks.
const MAINTAINER: u32 = 40;

/// One line of the check: fine, or a problem with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub ok: bool,
    pub text: String,
}

fn ok(text: String) -> Finding {
    Finding { ok: true, text }
}

fn problem(text: String) -> Finding {
    Finding { ok: false, text }
}

/// Checks `project` (id or `group/name`) with `client`'s token; `hook_url`, when given, is
/// where the project's hook should deliver (benchgate's `/webhooks/gitlab`). A call GitLab
/// does not answer ends the check with that error.
pub async fn check(
    client: &GitlabClient,
    project: &str,
    hook_url: Option<&str>,
) -> Result<Vec<Finding>, GitlabError> {
    let mut out = Vec::new();
    let user = client.current_user().await?;
    out.push(ok(format!(
        "token: acts as @{} (user {})",
        user.username, user.id
    )));
    match client.token_info().await {
        Ok(t) => {
            if t.scopes.iter().any(|s| s == "api") {
                out.push(ok(format!(
                    "scopes: {} (`api` writes notes and statuses)",
                    t.scopes.join(", ")
                )));
            } else {
                out.push(problem(format!(
                    "scopes: {}: benchgate needs `api` to write notes and commit statuses; make a token with `api`",
                    t.scopes.join(", ")
                )));
            }
            if !t.active || t.revoked {
                out.push(problem(format!("token `{}` is revoked or expired", t.name)));
            } else if let Some(date) = &t.expires_at {
                out.push(ok(format!(
                    "expires: {date} (renew it before then, or the gate stops answering)"
                )));
            }
        }
        Err(GitlabError::Refused {
            status, message, ..
        }) => out.push(problem(format!(
            "scopes: GitLab did not show them ({status}: {message}); check the token has `api`"
        ))),
        Err(e) => return Err(e),
    }
    let p = client.project(project).await?;
    out.push(ok(format!(
        "project: {} (id {}), default branch {}",
        p.path_with_namespace,
        p.id,
        p.default_branch.as_deref().unwrap_or("none")
    )));
    let level = client.access_level(p.id, user.id).await?.unwrap_or(0);
    if level >= DEVELOPER {
        out.push(ok(format!(
            "role: {} ({level}): enough for notes and commit statuses",
            role(level)
        )));
    } else {
        out.push(problem(format!(
            "role: {} ({level}): commit statuses need Developer (30) or above; give @{} Developer in {}",
            role(level),
            user.username,
            p.path_with_namespace
        )));
    }
    match client.project_status_checks(p.id).await {
        Ok(checks) => out.extend(status_check_findings(checks)),
        Err(GitlabError::Refused {
            status, message, ..
        }) => out.push(ok(format!(
            "status checks: not checked: GitLab did not list them ({status}: {message})"
        ))),
        Err(e) => return Err(e),
    }
    let Some(url) = hook_url else {
        out.push(ok(
            "hook: not checked (give --hook-url to check it)".to_owned()
        ));
        return Ok(out);
    };
    match client.hooks(p.id).await {
        Ok(hooks) => out.push(hook_finding(&hooks, url)),
        Err(GitlabError::Refused { status: 403, .. }) if level < MAINTAINER => out.push(ok(format!(
            "hook: not checked: GitLab lists hooks to Maintainers only; check by hand that a hook \
             delivers to {url} with merge request, comment, push and pipeline events"
        ))),
        Err(e) => return Err(e),
    }
    out.push(ok(
        "hook token: GitLab never shows it back: it must be one of serve's \
         BENCHGATE_GITLAB_HOOK_TOKEN (GitLab's \"Test\" button on the hook sends a delivery; \
         benchgate answers 401 to a wrong token)"
            .to_owned(),
    ));
    Ok(out)
}

/// The hook that delivers to `url`, and the events it leaves out.
fn hook_finding(hooks: &[HookInfo], url: &str) -> Finding {
    let Some(hook) = hooks.iter().find(|h| h.url == url) else {
        return problem(format!(
            "hook: none delivers to {url}; add one (Settings → Webhooks) with merge request, \
             comment, push and pipeline events and benchgate's secret token"
        ));
    };
    let missing: Vec<&str> = [
        (
            hook.merge_requests_events,
            "merge request events (merge requests)",
        ),
        (hook.note_events, "comments (commands such as /rebench)"),
        (
            hook.push_events,
            "push events (the default branch's history)",
        ),
        (
            hook.pipeline_events,
            "pipeline events (the status's pipeline)",
        ),
    ]
    .into_iter()
    .filter(|(on, _)| !on)
    .map(|(_, what)| what)
    .collect();
    if missing.is_empty() {
        ok(format!(
            "hook {}: delivers to {url} with every event benchgate acts on",
            hook.id
        ))
    } else {
        problem(format!(
            "hook {}: delivers to {url} without {}; turn them on",
            hook.id,
            missing.join(", ")
        ))
    }
}

/// The external status checks that point at benchgate, and whether GitLab signs their
/// requests (benchgate refuses unsigned ones). `None`: below Ultimate.
fn status_check_findings(checks: Option<Vec<ProjectStatusCheck>>) -> Vec<Finding> {
    let Some(checks) = checks else {
        return vec![ok(
            "status checks: none (Ultimate only); the `benchgate` commit status gates with \
             \"Pipelines must succeed\""
                .to_owned(),
        )];
    };
    let ours: Vec<&ProjectStatusCheck> = checks
        .iter()
        .filter(|c| {
            c.external_url
                .trim_end_matches('/')
                .ends_with(STATUS_CHECK_PATH)
        })
        .collect();
    if ours.is_empty() {
        return vec![ok(format!(
            "status checks: none points at {STATUS_CHECK_PATH} (optional; docs/gitlab.md)"
        ))];
    }
    ours.iter()
        .map(|c| {
            if c.hmac {
                ok(format!(
                    "status check `{}` (id {}): signed; answered when its name is a suite's \
                     check name (`benchgate` by default)",
                    c.name, c.id
                ))
            } else {
                problem(format!(
                    "status check `{}` (id {}): no HMAC shared secret, so benchgate refuses \
                     GitLab's requests (401); set it to the hook's secret token",
                    c.name, c.id
                ))
            }
        })
        .collect()
}

fn role(level: u32) -> &'static str {
    match level {
        0 => "not a member",
        1..=10 => "Guest",
        11..=20 => "Reporter",
        21..=30 => "Developer",
        31..=40 => "Maintainer",
        _ => "Owner",
    }
}
