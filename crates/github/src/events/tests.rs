use super::*;

fn pr_payload(head_repo: &str) -> String {
    format!(
        r#"{{
  "action": "opened",
  "repository": {{"full_name": "o/r", "clone_url": "https://github.com/o/r.git"}},
  "installation": {{"id": 7}},
  "pull_request": {{
    "number": 3, "draft": true, "author_association": "FIRST_TIME_CONTRIBUTOR",
    "user": {{"login": "alice", "type": "User"}},
    "base": {{"ref": "main", "sha": "b1", "repo": {{"full_name": "o/r", "clone_url": "https://github.com/o/r.git"}}}},
    "head": {{"ref": "feat", "sha": "h1", "repo": {head_repo}}}
  }}
}}"#
    )
}

fn parse_pr(body: &str) -> PullRequestEvent {
    match parse_event("pull_request", body.as_bytes()).unwrap() {
        WebhookEvent::PullRequest(pr) => pr,
        other => panic!("expected a pull request, got {other:?}"),
    }
}

#[test]
fn fork_detection_compares_head_and_base_repositories() {
    let same = parse_pr(&pr_payload(
        r#"{"full_name": "o/r", "clone_url": "https://github.com/o/r.git"}"#,
    ));
    assert!(!same.is_fork());
    assert!(same.draft);
    assert_eq!(
        same.author_association,
        AuthorAssociation::FirstTimeContributor
    );
    let fork = parse_pr(&pr_payload(
        r#"{"full_name": "mallory/r", "clone_url": "https://github.com/mallory/r.git"}"#,
    ));
    assert!(fork.is_fork());
    // A deleted fork leaves `head.repo` null: still a fork, never trusted.
    let deleted = parse_pr(&pr_payload("null"));
    assert_eq!(deleted.head_repo, None);
    assert!(deleted.is_fork());
}

#[test]
fn malformed_json_names_line_and_column() {
    let err = parse_event("pull_request", b"{\n  \"action\": \"opened\",\n  oops\n}").unwrap_err();
    assert_eq!((err.line, err.column), (3, 3), "{err}");
    assert!(
        err.to_string().starts_with("invalid pull_request payload"),
        "{err}"
    );
    assert!(
        !err.message.contains(" at line "),
        "position is reported once: {err}"
    );
}

#[test]
fn missing_field_names_its_path() {
    let body = pr_payload("null").replace(r#""sha": "h1", "#, "");
    let err = parse_event("pull_request", body.as_bytes()).unwrap_err();
    assert_eq!(err.path, "pull_request.head", "{err}");
    assert!(err.message.contains("missing field `sha`"), "{err}");
    let wrong_type = pr_payload("null").replace(r#""number": 3"#, r#""number": "3""#);
    let err = parse_event("pull_request", wrong_type.as_bytes()).unwrap_err();
    assert_eq!(err.path, "pull_request.number", "{err}");
}

#[test]
fn trailing_garbage_is_malformed() {
    let err = parse_event("ping", br#"{"zen": "x"} {"#).unwrap_err();
    assert!(err.message.contains("trailing"), "{err}");
}

#[test]
fn not_json_at_all_is_an_error_even_for_ignored_actions() {
    assert!(parse_event("pull_request", b"not json").is_err());
    assert!(parse_event("issue_comment", b"").is_err());
}

#[test]
fn unknown_events_are_ignored_without_parsing() {
    let got = parse_event("workflow_run", b"whatever").unwrap();
    assert_eq!(
        got,
        WebhookEvent::Ignored(IgnoredEvent {
            event: "workflow_run".into(),
            action: None
        })
    );
}

#[test]
fn ignored_pull_request_actions_do_not_need_the_full_shape() {
    let got = parse_event("pull_request", br#"{"action": "labeled"}"#).unwrap();
    assert_eq!(
        got,
        WebhookEvent::Ignored(IgnoredEvent {
            event: "pull_request".into(),
            action: Some("labeled".into())
        })
    );
}

#[test]
fn unknown_author_association_is_untrusted_not_an_error() {
    let body = pr_payload("null").replace("FIRST_TIME_CONTRIBUTOR", "SOMETHING_NEW");
    assert_eq!(
        parse_pr(&body).author_association,
        AuthorAssociation::Unknown
    );
}

#[test]
fn null_comment_body_is_empty() {
    let body = br#"{"action":"created","repository":{"full_name":"o/r","clone_url":"u"},
        "issue":{"number":4,"pull_request":{"url":"x"}},
        "comment":{"id":9,"body":null,"user":{"login":"bot[bot]","type":"Bot"},"author_association":"NONE"}}"#;
    match parse_event("issue_comment", body).unwrap() {
        WebhookEvent::PrComment(c) => {
            assert_eq!(c.body, "");
            assert!(c.commenter_is_bot);
            assert_eq!(c.installation_id, None);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_edit_matters_when_the_base_or_the_description_changed() {
    let base_changed =
        pr_payload(r#"{"full_name": "o/r", "clone_url": "https://github.com/o/r.git"}"#).replacen(
            r#""action": "opened","#,
            r#""action": "edited", "changes": {"base": {"ref": {"from": "develop"}}},"#,
            1,
        );
    assert_eq!(
        parse_pr(&base_changed).action,
        PullRequestAction::BaseChanged
    );
    let title_only =
        pr_payload(r#"{"full_name": "o/r", "clone_url": "https://github.com/o/r.git"}"#).replacen(
            r#""action": "opened","#,
            r#""action": "edited", "changes": {"title": {"from": "old"}},"#,
            1,
        );
    match parse_event("pull_request", title_only.as_bytes()).unwrap() {
        WebhookEvent::Ignored(i) => assert_eq!(i.action.as_deref(), Some("edited")),
        other => panic!("a title edit is ignored, got {other:?}"),
    }
    let described = |changes: &str| {
        pr_payload(r#"{"full_name": "o/r", "clone_url": "https://github.com/o/r.git"}"#).replacen(
            r#""action": "opened","#,
            &format!(r#""action": "edited", "changes": {changes},"#),
            1,
        )
    };
    assert_eq!(
        parse_pr(&described(r#"{"body": {"from": "old text"}}"#)).action,
        PullRequestAction::DescriptionEdited
    );
    // Both at once: the new base decides (it measures again, and reads the new description).
    assert_eq!(
        parse_pr(&described(
            r#"{"body": {"from": "x"}, "base": {"ref": {"from": "develop"}}}"#
        ))
        .action,
        PullRequestAction::BaseChanged
    );
}

#[test]
fn every_pull_request_action_spells_back_to_what_it_was_read_from() {
    use PullRequestAction::*;
    for action in [
        Opened,
        Synchronize,
        Reopened,
        ReadyForReview,
        Closed,
        ConvertedToDraft,
        BaseChanged,
    ] {
        assert_eq!(pull_request_action(action.as_str()), Some(action));
    }
}

#[test]
fn a_pull_request_read_in_one_pass_is_the_same_as_read_in_several() {
    let full = pr_payload(r#"{"full_name": "o/r", "clone_url": "https://github.com/o/r.git"}"#);
    for body in [
        full.clone(),
        full.replacen(r#""action": "opened","#, r#""action": "labeled","#, 1),
        full.replacen(r#""action": "opened","#, "", 1),
    ] {
        let one_pass = parse_event("pull_request", body.as_bytes()).unwrap();
        // A `changes` of the wrong shape fails the one pass (it reads `changes`), so this body
        // is read by the several passes, which read `changes` only for `edited`.
        let odd = body.replacen(r#""repository""#, r#""changes": 5, "repository""#, 1);
        assert!(serde_json::from_slice::<wire::PullRequestDelivery>(odd.as_bytes()).is_err());
        let several = parse_event("pull_request", odd.as_bytes()).unwrap();
        assert_eq!(one_pass, several, "{body}");
    }
}

/// The octokit example's group object, with `action` and top-level extras spliced in.
fn merge_group_payload(action: &str, extra: &str) -> String {
    format!(
        r#"{{
  "action": "{action}",{extra}
  "merge_group": {{
    "head_sha": "2ffea6db159f6b6c47a24e778fb9ef40cf6b1c7d",
    "head_ref": "refs/heads/gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64",
    "base_sha": "380387fbc80638b734a49e1be1c4dfec1c01b33c",
    "base_ref": "refs/heads/main"
  }},
  "repository": {{"full_name": "o/r", "clone_url": "https://github.com/o/r.git"}}
}}"#
    )
}

fn parse_merge_group(body: &str) -> MergeGroupEvent {
    match parse_event("merge_group", body.as_bytes()).unwrap() {
        WebhookEvent::MergeGroup(g) => g,
        other => panic!("expected a merge group, got {other:?}"),
    }
}

#[test]
fn a_merge_group_without_head_commit_or_installation_still_parses() {
    let g = parse_merge_group(&merge_group_payload("checks_requested", ""));
    assert_eq!(g.action, MergeGroupAction::ChecksRequested);
    assert_eq!(
        g.head_ref,
        "gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64"
    );
    assert_eq!(g.base_ref, "main");
    assert_eq!(g.head_message, "");
    assert_eq!(g.installation_id, None);
    assert_eq!(g.queued_pr(), Some(104));
}

#[test]
fn a_merge_group_without_base_sha_is_refused_at_its_path() {
    let body = merge_group_payload("checks_requested", "").replace(
        r#""base_sha": "380387fbc80638b734a49e1be1c4dfec1c01b33c","#,
        "",
    );
    let err = parse_event("merge_group", body.as_bytes()).unwrap_err();
    assert_eq!(err.path, "merge_group", "{err}");
    assert_eq!(err.message, "missing field `base_sha`", "{err}");
    assert!(
        err.to_string()
            .starts_with("invalid merge_group payload at `merge_group`"),
        "{err}"
    );
}

#[test]
fn merge_group_actions_other_than_the_two_are_ignored_unread() {
    for body in [
        r#"{"action": "enqueued"}"#,
        r#"{"action": "checks_completed", "merge_group": 5}"#,
        r#"{}"#,
    ] {
        let sent: serde_json::Value = serde_json::from_str(body).unwrap();
        let got = parse_event("merge_group", body.as_bytes()).unwrap();
        assert_eq!(
            got,
            WebhookEvent::Ignored(IgnoredEvent {
                event: "merge_group".into(),
                action: sent["action"].as_str().map(str::to_owned),
            }),
            "{body}"
        );
    }
}

#[test]
fn every_destroy_reason_is_read_and_an_unknown_or_missing_one_is_other() {
    let table = [
        (r#" "reason": "merged","#, DestroyReason::Merged),
        (r#" "reason": "invalidated","#, DestroyReason::Invalidated),
        (r#" "reason": "dequeued","#, DestroyReason::Dequeued),
        (r#" "reason": "expired","#, DestroyReason::Other),
        ("", DestroyReason::Other),
    ];
    for (reason, want) in table {
        let g = parse_merge_group(&merge_group_payload("destroyed", reason));
        assert_eq!(g.action, MergeGroupAction::Destroyed(want), "{reason}");
        assert_eq!(g.action.as_str(), "destroyed");
        if want != DestroyReason::Other {
            assert!(reason.contains(want.as_str()), "{reason}");
        }
    }
    // `reason` is read only for `destroyed`: a new group ignores it.
    let g = parse_merge_group(&merge_group_payload(
        "checks_requested",
        r#" "reason": "merged","#,
    ));
    assert_eq!(g.action, MergeGroupAction::ChecksRequested);
}

#[test]
fn refs_lose_their_refs_heads_prefix_only() {
    let body = merge_group_payload("checks_requested", "")
        .replace(
            "refs/heads/gh-readonly-queue/main/",
            "gh-readonly-queue/main/",
        )
        .replace("refs/heads/main", "refs/heads/release/1.x");
    let g = parse_merge_group(&body);
    assert_eq!(
        g.head_ref,
        "gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64"
    );
    assert_eq!(g.base_ref, "release/1.x");
}

#[test]
fn the_queued_pr_is_read_from_the_groups_ref_or_not_at_all() {
    let group = |head_ref: &str| MergeGroupEvent {
        action: MergeGroupAction::ChecksRequested,
        repo: RepoRef {
            full_name: "o/r".into(),
            clone_url: "u".into(),
        },
        installation_id: None,
        head_sha: "h".into(),
        head_ref: head_ref.into(),
        base_sha: "b".into(),
        base_ref: "main".into(),
        head_message: String::new(),
    };
    let table: &[(&str, Option<u64>)] = &[
        (
            "gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64",
            Some(104),
        ),
        // The base branch may itself contain `/` and even look like an entry.
        ("gh-readonly-queue/release/pr-9-abc/pr-7-0123abcd", Some(7)),
        ("gh-readonly-queue/main/pr-104", None),
        ("gh-readonly-queue/main/pr--929f", None),
        ("gh-readonly-queue/main/pr-+104-929f", None),
        ("gh-readonly-queue/main/pr-104-xyz", None),
        (
            "gh-readonly-queue/main/pr-99999999999999999999999-929f",
            None,
        ),
        ("gh-readonly-queue/pr-104-929f", None),
        ("feature/pr-104-929f", None),
        ("", None),
    ];
    for (head_ref, want) in table {
        assert_eq!(group(head_ref).queued_pr(), *want, "{head_ref}");
    }
}

/// GitHub's own payload of a comment on a plain issue: read as a comment that is not on a pull
/// request, so only `/benchgate bisect` there means anything (the server decides).
#[test]
fn a_comment_on_a_plain_issue_is_read_as_not_on_a_pull_request() {
    let body = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/webhooks/issue_comment.created.on-issue.with-installation.json"
    ))
    .unwrap();
    match parse_event("issue_comment", &body).unwrap() {
        WebhookEvent::PrComment(c) => {
            assert!(!c.on_pull_request);
            assert_eq!((c.pr_number, c.installation_id), (1, Some(1)));
        }
        other => panic!("{other:?}"),
    }
    let on_pr = br#"{"action":"created","repository":{"full_name":"o/r","clone_url":"u"},
        "issue":{"number":4,"pull_request":{"url":"x"}},
        "comment":{"id":9,"body":"/rebench","user":{"login":"o","type":"User"},"author_association":"OWNER"}}"#;
    match parse_event("issue_comment", on_pr).unwrap() {
        WebhookEvent::PrComment(c) => assert!(c.on_pull_request),
        other => panic!("{other:?}"),
    }
}
