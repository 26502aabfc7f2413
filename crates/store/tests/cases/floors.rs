//! A/A sessions, floors and their history; stored results and GitHub ids.

use crate::support::*;
use benchgate_store::*;
use std::sync::Arc;

pub async fn noise_floors_keep_history(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let key = FloorKey {
        runner_id: r1.id,
        repository_id: repo.id,
        benchmark: "parse".into(),
        metric: "time".into(),
    };
    let now = chrono::Utc::now();
    let session = |mean: f64, at| AaSession {
        job_id: None,
        key: key.clone(),
        pairs: 20,
        mean,
        spread: 0.01,
        layout: false,
        recorded_at: at,
    };
    store.record_aa_session(&session(0.001, now)).await.unwrap();
    let salted = AaSession {
        layout: true,
        ..session(-0.002, now)
    };
    store.record_aa_session(&salted).await.unwrap();
    let layouts: Vec<bool> = store
        .aa_sessions(&key)
        .await
        .unwrap()
        .iter()
        .map(|s| s.layout)
        .collect();
    assert_eq!(layouts, [false, true]);

    let floor = |sessions: i64, bias: f64| NoiseFloor {
        key: key.clone(),
        pairs: 20 * sessions,
        sessions,
        within_spread: 0.01,
        between_bias: bias,
        layout_bias: (sessions > 1).then_some(0.02),
        layout_lower: (sessions > 1).then_some(0.01),
        layout_upper: (sessions > 1).then_some(0.05),
        // The first as a floor from before slow modes were counted; the second with slow runs.
        slow_mode: (sessions > 1).then_some(SlowModeTally {
            slow_runs: 8,
            runs: 48,
            sessions,
            excess: Some(0.262),
        }),
        computed_at: chrono::DateTime::from_timestamp(1_700_000_000 + sessions, 0).unwrap(),
    };
    assert!(store.noise_floor(&key).await.unwrap().is_none());
    store.update_noise_floor(&floor(1, 0.0)).await.unwrap();
    store.update_noise_floor(&floor(2, 0.0015)).await.unwrap();
    assert_eq!(
        store.noise_floor(&key).await.unwrap(),
        Some(floor(2, 0.0015))
    );
    assert_eq!(
        store.noise_floor_history(&key).await.unwrap(),
        vec![floor(1, 0.0), floor(2, 0.0015)]
    );
    assert_eq!(
        store.runner_noise_floors(r1.id).await.unwrap(),
        vec![floor(2, 0.0015)]
    );
    let elsewhere = FloorKey {
        metric: "instructions".into(),
        ..key.clone()
    };
    assert!(store.noise_floor(&elsewhere).await.unwrap().is_none());

    // Counted without a slow run: no excess, and still a tally (not a floor from before).
    let calm = NoiseFloor {
        slow_mode: Some(SlowModeTally {
            slow_runs: 0,
            runs: 120,
            sessions: 5,
            excess: None,
        }),
        ..floor(5, 0.0)
    };
    store.update_noise_floor(&calm).await.unwrap();
    assert_eq!(store.noise_floor(&key).await.unwrap(), Some(calm));
}

/// Results at the edges the analysis reaches read back as written: a clear change whose e-value
/// saturates, an exact metric's change, samples at the largest value accepted. Postgres's
/// `jsonb` once gave a saturated e-value back in a form the reader refused, and the comparison
/// said "no results yet".
pub async fn saturated_results_read_back(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let c = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let opts = benchgate_stats::AnalysisOptions::default();
    let max = benchgate_api::sample::MAX_VALUE;
    // 50% slower over 400 pairs with 1% noise; an instruction count changed by one; the
    // largest samples accepted, 2% apart.
    let wobble = |i: usize| 1.0 + 0.01 * ((i * 7919 % 200) as f64 / 100.0 - 1.0);
    let base: Vec<f64> = (0..400).map(|i| 1000.0 * wobble(i)).collect();
    let head: Vec<f64> = (0..400).map(|i| 1500.0 * wobble(i + 13)).collect();
    let clear = benchgate_stats::analyze_pairs(&base, &head, &opts, None).unwrap();
    assert_eq!(
        clear.e_value,
        benchgate_stats::SATURATED,
        "the e-value saturates"
    );
    let exact = benchgate_stats::analyze_pairs(&[1e6; 8], &[1e6 + 1.0; 8], &opts, None).unwrap();
    let huge: Vec<f64> = (0..8).map(|i| max * wobble(i) / 1.02).collect();
    let near: Vec<f64> = huge.iter().map(|v| v * 1.02).collect();
    let extreme = benchgate_stats::analyze_pairs(&huge, &near, &opts, None).unwrap();
    // The smallest and largest values accepted side by side: a ratio of 1e305, whose
    // percentage is past what a result carries and is served as `null`.
    let tiny: Vec<f64> = (0..8).map(|i| 1e-5 * wobble(i)).collect();
    let ratio = benchgate_stats::analyze_pairs(&tiny, &huge, &opts, None).unwrap();
    let ratio = ratio.to_result("tokenize", "time", "ns");
    assert_eq!(ratio.change_pct, None, "{ratio:?}");
    let rows = [
        clear.to_result("parse", "time", "ns"),
        exact.to_result("parse", "instructions", "count"),
        extreme.to_result("render", "time", "ns"),
        ratio,
    ];
    store
        .replace_comparison_results(c.id, r1.id, 1, &rows)
        .await
        .unwrap();
    let stored = store.comparison_results(c.id).await.unwrap();
    assert_eq!(stored.len(), rows.len(), "every row reads back: {stored:?}");
    for (want, got) in [&rows[1], &rows[0], &rows[2], &rows[3]]
        .into_iter()
        .zip(&stored)
    {
        assert_eq!(
            (&got.result.name, &got.result.metric),
            (&want.name, &want.metric)
        );
        assert_eq!(got.result.verdict, want.verdict);
        // Postgres prints numbers in full; reading 301 digits back may move the last bit.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
        assert!(
            close(got.result.e_value, want.e_value),
            "{got:?} vs {want:?}"
        );
        let (g, w) = (got.result.head_center.unwrap(), want.head_center.unwrap());
        assert!(close(g, w), "{g} vs {w}");
    }
}

pub async fn comparison_results_and_github_ids(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let c = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    let result = |n: usize, verdict| benchgate_api::BenchmarkResult {
        rule: None,
        name: "parse".into(),
        metric: "time".into(),
        unit: "ns".into(),
        n,
        base_center: Some(100.0),
        head_center: Some(110.0),
        change_pct: Some(10.0),
        interval_pct: [None, None],
        fixed_interval_pct: [Some(2.0), Some(18.0)],
        verdict,
        practical: false,
        rounds_needed: Some(12),
        e_value: 1.5,
        gated: true,
        selected: true,
        hodges_lehmann: None,
        warnings: Vec::new(),
        direction: Default::default(),
        margin_pct: 1.0,
        layout_pct: None,
        tolerance_pct: None,
        reason: None,
        runners: Vec::new(),
        runs: None,
        modes: None,
        guard_runs: None,
    };
    use benchgate_api::VerdictKind::{NoResultYet, Slower};
    store
        .replace_comparison_results(c.id, r1.id, 1, &[result(5, NoResultYet)])
        .await
        .unwrap();
    store
        .replace_comparison_results(c.id, r1.id, 2, &[result(20, Slower)])
        .await
        .unwrap();
    let stored = store.comparison_results(c.id).await.unwrap();
    assert_eq!(stored.len(), 1, "a newer result replaces the older one");
    assert_eq!(
        (stored[0].runner_id, &stored[0].result),
        (r1.id, &result(20, Slower))
    );

    let run = CheckRunRecord {
        check_run_id: 123456789012,
        generation: 0,
        completed: false,
    };
    store.record_check_run(c.id, run).await.unwrap();
    assert_eq!(
        store.comparison(c.id).await.unwrap().unwrap().check_run_id,
        Some(123456789012)
    );
    assert!(
        store
            .pull_request_comment_id(repo.id, 7, "x")
            .await
            .unwrap()
            .is_none()
    );
    store
        .set_pull_request_comment_id(repo.id, 7, "x", 1)
        .await
        .unwrap();
    store
        .set_pull_request_comment_id(repo.id, 7, "x", 2)
        .await
        .unwrap();
    assert_eq!(
        store
            .pull_request_comment_id(repo.id, 7, "x")
            .await
            .unwrap(),
        Some(2)
    );
    assert!(
        store
            .pull_request_comment_id(repo.id, 7, "arm")
            .await
            .unwrap()
            .is_none()
    );

    // Repositories: GitHub ones keep their row across a rename.
    let gh = NewRepository {
        github_id: Some(99),
        installation_id: None,
        full_name: "acme/old".into(),
        clone_url: "https://github.com/acme/old.git".into(),
        forge: Default::default(),
    };
    store
        .upsert_installation(&Installation {
            id: 5,
            account_login: "acme".into(),
        })
        .await
        .unwrap();
    let first = store
        .upsert_repository(&NewRepository {
            installation_id: Some(5),
            ..gh.clone()
        })
        .await
        .unwrap();
    let renamed = store
        .upsert_repository(&NewRepository {
            full_name: "acme/new".into(),
            ..gh
        })
        .await
        .unwrap();
    assert_eq!(first.id, renamed.id);
    assert_eq!(renamed.installation_id, Some(5));
    assert_eq!(
        store
            .repository_by_name("acme/new")
            .await
            .unwrap()
            .unwrap()
            .id,
        first.id
    );
    store.remove_installation(5).await.unwrap();
    assert!(
        store
            .repository(first.id)
            .await
            .unwrap()
            .unwrap()
            .removed_at
            .is_some()
    );
}

pub async fn replacing_results_drops_those_no_longer_computed(store: Arc<dyn Store>) {
    let repo = repo(&store, "acme/widgets").await;
    let r1 = runner(&store, "r1", &["x"]).await.runner;
    let r2 = runner(&store, "r2", &["x"]).await.runner;
    let c = store
        .create_comparison(&comparison(&repo, Some(7), "h1", "x", jobs(1, 3)))
        .await
        .unwrap();
    // From JSON, so fields the wire type gains later take their defaults.
    let result = |name: &str| -> benchgate_api::BenchmarkResult {
        serde_json::from_value(serde_json::json!({
            "name": name,
            "metric": "time",
            "unit": "ns",
            "n": 10,
            "base_center": 100.0,
            "head_center": 110.0,
            "change_pct": 10.0,
            "interval_pct": [2.0, 18.0],
            "fixed_interval_pct": [2.0, 18.0],
            "verdict": "slower",
            "practical": true,
            "rounds_needed": null,
            "e_value": 40.0,
            "gated": true,
            "selected": true,
        }))
        .expect("a benchmark result")
    };
    let names = |runner: RunnerId, stored: &[StoredResult]| {
        stored
            .iter()
            .filter(|s| s.runner_id == runner)
            .map(|s| s.result.name.clone())
            .collect::<Vec<_>>()
    };
    store
        .replace_comparison_results(c.id, r1.id, 3, &[result("parse"), result("render")])
        .await
        .unwrap();
    store
        .replace_comparison_results(c.id, r2.id, 4, &[result("parse")])
        .await
        .unwrap();

    // "render" can no longer be analysed on r1: its old verdict must not stay behind.
    store
        .replace_comparison_results(c.id, r1.id, 5, &[result("parse")])
        .await
        .unwrap();
    let stored = store.comparison_results(c.id).await.unwrap();
    assert_eq!(names(r1.id, &stored), vec!["parse"]);
    assert_eq!(
        names(r2.id, &stored),
        vec!["parse"],
        "other runners keep theirs"
    );

    store
        .replace_comparison_results(c.id, r1.id, 6, &[])
        .await
        .unwrap();
    let stored = store.comparison_results(c.id).await.unwrap();
    assert!(names(r1.id, &stored).is_empty());
    assert_eq!(names(r2.id, &stored), vec!["parse"]);

    // An analysis computed from fewer samples (another replica's older view, finishing late)
    // changes nothing; one from as many or more replaces the set.
    let replaced = store
        .replace_comparison_results(c.id, r2.id, 3, &[result("stale")])
        .await
        .unwrap();
    assert!(!replaced);
    let stored = store.comparison_results(c.id).await.unwrap();
    assert_eq!(names(r2.id, &stored), vec!["parse"]);
    assert!(
        store
            .replace_comparison_results(c.id, r2.id, 4, &[result("render")])
            .await
            .unwrap()
    );
    let stored = store.comparison_results(c.id).await.unwrap();
    assert_eq!(names(r2.id, &stored), vec!["render"]);
}
