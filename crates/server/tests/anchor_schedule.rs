//! Scheduled anchor comparisons, on a real SQLite file through the Store: due once the branch
//! has moved at least two compared commits past its anchor and none ran within the schedule,
//! never twice for the same commits, never with `schedule = "off"`.

use std::sync::Arc;

use benchgate_api::agent::{
    Anchor, BenchmarkSpec, ComparisonConfig, GateSpec, MainSettings, ScheduleKind,
    StoredComparisonConfig,
};
use benchgate_server::main_history::schedule_due_anchors;
use benchgate_store::*;

fn config(schedule_hours: Option<u32>) -> StoredComparisonConfig {
    StoredComparisonConfig {
        main: Some(MainSettings {
            anchor: Anchor::Commits(3),
            schedule_hours,
            ..MainSettings::default()
        }),
        ..StoredComparisonConfig::from(ComparisonConfig {
            benchmark: BenchmarkSpec {
                build: None,
                run: "./bench".into(),
                format: "command".into(),
                rounds: 10,
                warmup: 1,
                schedule: ScheduleKind::Abba,
                seed: None,
                timeout_secs: None,
                env: Vec::new(),
                bench_from_head: Vec::new(),
                network: false,
                layout_salt: None,
                canary_work: false,
                counts: None,
                count_run: None,
                ignore: Vec::new(),
                artifacts: Vec::new(),
                measure_secs: None,
                measure_auto: false,
                budget_secs: None,
            },
            gate: GateSpec {
                fail_on: Default::default(),
                min_effect: 0.05,
                tolerance: None,
                rare_slow_runs: None,
                claims: Default::default(),
                on_no_answer: Default::default(),
                gate_on: Default::default(),
            },
            suite: None,
            rules: Vec::new(),
        })
    }
}

async fn steps(
    store: &Arc<dyn Store>,
    repo: &Repository,
    label: &str,
    schedule: Option<u32>,
    n: usize,
) {
    for i in 0..n {
        store
            .create_comparison(
                &step_like(repo, label, schedule)
                    .between(format!("{label}{i}"), format!("{label}{}", i + 1))
                    .main(MainKind::Step, "main", vec![format!("{label}{}", i + 1)]),
            )
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn an_anchor_comparison_is_scheduled_when_due_and_only_then() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("server.db").display());
    let store = connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    let repo = store
        .upsert_repository(&NewRepository {
            github_id: None,
            installation_id: None,
            full_name: "acme/widgets".into(),
            clone_url: "https://example.invalid/acme/widgets.git".into(),
            forge: benchgate_store::model::Forge::GitHub,
        })
        .await
        .unwrap();
    let now = chrono::Utc::now();
    // One step: the anchor would be that step again.
    steps(&store, &repo, "a", Some(24), 1).await;
    assert_eq!(schedule_due_anchors(&store, 3, now).await.unwrap(), 0);
    // Four steps on label a (scheduled every 24 h), four on label b (schedule "off").
    store
        .create_comparison(&step_like(&repo, "a", Some(24)).between("a1", "a2"))
        .await
        .unwrap();
    steps(&store, &repo, "b", None, 4).await;
    for (base, head) in [("a2", "a3"), ("a3", "a4")] {
        store
            .create_comparison(&step_like(&repo, "a", Some(24)).between(base, head))
            .await
            .unwrap();
    }
    assert_eq!(schedule_due_anchors(&store, 3, now).await.unwrap(), 1);
    let anchors: Vec<Comparison> = store
        .main_comparisons(repo.id, "main")
        .await
        .unwrap()
        .into_iter()
        .filter(|c| c.main.as_ref().is_some_and(|m| m.kind == MainKind::Anchor))
        .collect();
    assert_eq!(anchors.len(), 1);
    assert_eq!(
        (anchors[0].base_sha.as_str(), anchors[0].head_sha.as_str()),
        ("a1", "a4"),
        "3 commits back"
    );
    assert_eq!(anchors[0].runner_label, "a");
    assert_eq!(
        anchors[0].main.as_ref().unwrap().commits,
        ["a2", "a3", "a4"]
    );
    // Not again within the schedule, nor for the same commits a day later.
    assert_eq!(schedule_due_anchors(&store, 3, now).await.unwrap(), 0);
    let tomorrow = now + chrono::TimeDelta::hours(25);
    assert_eq!(
        schedule_due_anchors(&store, 3, tomorrow).await.unwrap(),
        0,
        "the branch did not move"
    );
}

fn step_like(repo: &Repository, label: &str, schedule: Option<u32>) -> NewComparison {
    NewComparison::new(repo.id, "", "", label, config(schedule)).main(
        MainKind::Step,
        "main",
        Vec::new(),
    )
}
