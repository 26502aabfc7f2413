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
fn an_edit_matters_only_when_the_base_changed() {
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
