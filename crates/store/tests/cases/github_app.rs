//! The GitHub App setup: single-use states and the stored credentials.

use benchgate_store::*;
use std::sync::Arc;
use std::time::Duration;

const HOUR: Duration = Duration::from_secs(3600);

pub async fn setup_states_are_single_use_and_expire(store: Arc<dyn Store>) {
    let state = store.create_setup_state(HOUR).await.unwrap();
    assert_eq!(state.expose().len(), 64, "256 bits as hex");
    assert!(!format!("{state:?}").contains(state.expose()));
    let other = store.create_setup_state(HOUR).await.unwrap();
    assert_ne!(state, other);

    let check = |s: String| {
        let store = store.clone();
        async move { store.consume_setup_state(&s).await.unwrap() }
    };
    assert_eq!(check(state.0.clone()).await, SetupStateCheck::Accepted);
    assert_eq!(check(state.0.clone()).await, SetupStateCheck::Used);
    assert_eq!(check("0".repeat(64)).await, SetupStateCheck::Unknown);
    assert_eq!(check(String::new()).await, SetupStateCheck::Unknown);
    assert_eq!(check(other.0.clone()).await, SetupStateCheck::Accepted);

    let expired = store.create_setup_state(Duration::ZERO).await.unwrap();
    assert_eq!(check(expired.0.clone()).await, SetupStateCheck::Expired);
    assert_eq!(
        check(expired.0).await,
        SetupStateCheck::Expired,
        "an expired state stays refused"
    );
}

pub async fn a_setup_state_is_accepted_once_under_concurrent_callbacks(store: Arc<dyn Store>) {
    let state = store.create_setup_state(HOUR).await.unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (store, state) = (store.clone(), state.0.clone());
        tasks.spawn(async move { store.consume_setup_state(&state).await.unwrap() });
    }
    let mut accepted = 0;
    while let Some(check) = tasks.join_next().await {
        match check.unwrap() {
            SetupStateCheck::Accepted => accepted += 1,
            other => assert_eq!(other, SetupStateCheck::Used),
        }
    }
    assert_eq!(accepted, 1);
}

pub async fn github_app_credentials_are_kept_and_replaced(store: Arc<dyn Store>) {
    assert_eq!(store.github_app_credentials().await.unwrap(), None);
    let first = GitHubAppCredentials {
        app_id: 1,
        slug: "octoapp".into(),
        html_url: "https://github.com/apps/octoapp".into(),
        owner_login: Some("github".into()),
        webhook_secret: "e340154128314309424b7c8e90325147d99fdafa".into(),
        private_key_pem: "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n"
            .into(),
        created_at: chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00.123456Z")
            .unwrap()
            .into(),
    };
    let debug = format!("{first:?}");
    assert!(
        !debug.contains("e3401541") && !debug.contains("MIIE"),
        "{debug}"
    );

    store.save_github_app_credentials(&first).await.unwrap();
    assert_eq!(
        store.github_app_credentials().await.unwrap(),
        Some(first.clone())
    );

    let second = GitHubAppCredentials {
        app_id: 2,
        slug: "benchgate-acme".into(),
        owner_login: None,
        webhook_secret: "rotated".into(),
        ..first
    };
    store.save_github_app_credentials(&second).await.unwrap();
    assert_eq!(
        store.github_app_credentials().await.unwrap(),
        Some(second),
        "a second setup replaces the first"
    );
}
