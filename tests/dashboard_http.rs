//! The dashboard over HTTP as a browser or a script sees it: the real binary on a SQLite file
//! seeded through the Store; pages, JSON, CSV, `/metrics`, the optional token and 404s.

use crate::support::dashboard_seed::{
    LABEL, Seeded, seed_file_ordered_suite, seed_second_repository, seed_small,
};
use crate::support::{Server, http, spawn_server};
use benchgate_github::signature::sign_with;

/// A server on a fresh SQLite file holding `seed_small`'s data.
async fn seeded_server(env: &[(&str, &str)]) -> (tempfile::TempDir, Server, Seeded) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("dash.db").display());
    let store = benchgate_store::connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    let seeded = seed_small(store.as_ref()).await;
    drop(store);
    let server = spawn_server(&url, env);
    (dir, server, seeded)
}

async fn get(url: &str) -> (u16, String) {
    let resp = http().get(url).send().await.expect("request");
    (resp.status().as_u16(), resp.text().await.unwrap())
}

fn assert_contains(body: &str, needles: &[&str]) {
    for needle in needles {
        assert!(body.contains(needle), "missing {needle:?} in:\n{body}");
    }
}

#[tokio::test]
async fn pages_show_runners_floors_results_and_the_queue() {
    let (_dir, server, s) = seeded_server(&[]).await;

    let (status, home) = get(&server.url("/")).await;
    assert_eq!(status, 200);
    assert_contains(
        &home,
        &["quiet-1", "busy", "quiet-2", "online", "old-box", "offline"],
    );
    assert_contains(
        &home,
        &[
            "acme/widgets",
            "#42",
            "1 slower",
            "1 no change",
            "id=\"queued\">2<",
        ],
    );

    let (status, runner) = get(&server.url(&format!("/runners/{}", s.busy_runner))).await;
    assert_eq!(status, 200);
    assert_contains(
        &runner,
        &["AMD EPYC 7B13", "performance", "parse/json", "render/html"],
    );
    // The fingerprint in words and units, never raw JSON.
    assert_contains(
        &runner,
        &[
            "<dt>boost (turbo)</dt><dd>unknown</dd>",
            "<dt>memory</dt><dd>23.54 GiB</dd>",
            "load 0.52 / 0.61 / 0.70",
        ],
    );
    assert!(!runner.contains("null"), "{runner}");
    assert!(!runner.contains("25276502016"), "{runner}");
    // parse/json's current floor: s_aa = 0.012 → 1.21% per pair; 7 sessions.
    assert_contains(&runner, &["1.21%", "in ~", "rounds", "<svg class=\"plot\""]);

    let (status, page) = get(&server.url(&format!("/comparisons/{}", s.comparison_id))).await;
    assert_eq!(status, 200);
    assert_contains(
        &page,
        &[
            "parse/json",
            "+5.0% [+3.4%, +6.7%]",
            "slower (beyond ±1.0%)",
        ],
    );
    assert_contains(
        &page,
        &[
            "no change beyond ±1.0%",
            "https://github.com/acme/widgets/pull/42",
        ],
    );
    assert_contains(
        &page,
        &["bench-suite exited with status 101", "12 rounds uploaded"],
    );
    assert_contains(&page, &["out of memory&#62;", "outlier"]);
    assert!(!page.contains("<out of memory>"), "logs are escaped");
    assert_eq!(
        page.matches("<svg class=\"plot\"").count(),
        4,
        "two plots per benchmark"
    );

    let (status, queue) = get(&server.url("/queue")).await;
    assert_eq!(status, 200);
    assert_contains(
        &queue,
        &[
            "running",
            "quiet-1",
            "only <a href=\"/runners/old-box\">",
            "calibration",
            "left",
        ],
    );
}

/// A suite stored in file order reads as the PR comment does: the summary, the regressions
/// (largest first), the improvement, then the undecided and unchanged rows folded, and the row
/// a rule ignores apart and uncounted.
#[tokio::test]
async fn a_comparison_page_reads_in_the_report_order() {
    let (dir, server, _) = seeded_server(&[]).await;
    let url = format!("sqlite://{}", dir.path().join("dash.db").display());
    let store = benchgate_store::connect(&url).await.unwrap();
    let id = seed_file_ordered_suite(store.as_ref()).await;

    let (status, page) = get(&server.url(&format!("/comparisons/{id}"))).await;
    assert_eq!(status, 200);
    let at = |needle: &str| {
        page.find(needle)
            .unwrap_or_else(|| panic!("missing {needle:?} in:\n{page}"))
    };
    let summary = at(
        "<p class=\"summary\"><strong>5 benchmarks: 2 slower, 1 faster, 1 no change, 1 no result yet; worst: sort/large time +9.0%",
    );
    // The description's claims, answered above the rows.
    let claims = at("<h2 id=\"claims\">The PR's claims</h2>");
    at("<li>hash/fnv -4.0% claimed: confirmed, measured [-5.1%, -2.9%] (sentence)</li>");
    at("<li>sort/large -10% claimed: opposite, measured [+7.4%, +11%] (sentence)</li>");
    assert!(claims < summary, "claims come first:\n{page}");
    assert!(page[summary..].contains("; best: hash/fnv time"), "{page}");
    let row = |name: &str| at(&format!("\">{name}</a></td>"));
    let order = [
        summary,
        at("<table id=\"results\""),
        row("sort/large"),
        row("sort/small"),
        row("hash/fnv"),
        at("<details id=\"folded\"><summary>2 undecided or unchanged rows</summary>"),
        row("fmt/int"),
        row("fmt/float"),
        at("<details id=\"ignored\">"),
        row("bench/setup"),
    ];
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "rows out of report order at {order:?}:\n{page}"
    );
}

#[tokio::test]
async fn json_endpoints_return_the_page_data() {
    let (_dir, server, s) = seeded_server(&[]).await;
    let json = |path: String| {
        let url = server.url(&path);
        async move {
            let resp = http().get(url).send().await.unwrap();
            assert_eq!(resp.status(), 200, "{path}");
            resp.json::<serde_json::Value>().await.unwrap()
        }
    };

    let runners = json("/api/v1/runners".into()).await;
    let status_of = |name: &str| {
        runners
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status_of(&s.busy_runner), "busy");
    assert_eq!(status_of(&s.idle_runner), "online");
    assert_eq!(status_of(&s.offline_runner), "offline");

    let runner = json(format!("/api/v1/runners/{}", s.busy_runner)).await;
    let floors = runner["floors"].as_array().unwrap();
    assert_eq!(floors.len(), 2);
    assert_eq!(floors[0]["history"].as_array().unwrap().len(), 7);
    assert_eq!(floors[0]["sessions"], 7);
    assert!(floors[0]["resolves"][1]["rounds"].as_u64().unwrap() > 2);

    let queue = json("/api/v1/queue".into()).await;
    assert_eq!(
        (queue["queued"].as_i64(), queue["running"].as_i64()),
        (Some(2), Some(1))
    );
    let running = &queue["jobs"][0];
    assert_eq!(running["state"], "running");
    assert_eq!(running["runner"], "quiet-1");
    assert_eq!(running["comparison_id"], s.running_comparison_id);

    let list = json("/api/v1/comparisons?limit=5".into()).await;
    let finished = list
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == s.comparison_id)
        .unwrap();
    assert_eq!(finished["verdicts"][0]["verdict"], "slower");
    assert_eq!(finished["pr_number"], 42);
    let (status, _) = get(&server.url("/api/v1/comparisons?limit=0")).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn samples_export_as_csv() {
    let (_dir, server, s) = seeded_server(&[]).await;
    let url = server.url(&format!(
        "/api/v1/comparisons/{}/samples.csv",
        s.comparison_id
    ));
    let resp = http().get(url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let csv = resp.text().await.unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "runner,job,attempt,round,side,position,benchmark,metric,unit,value,lower,upper,recorded_at"
    );
    // 20 rounds (12 + 8) × 2 benchmarks × 2 sides.
    assert_eq!(lines.len(), 1 + 80);
    assert!(lines[1].starts_with("quiet-1,"), "{}", lines[1]);
}

/// `/metrics` as Prometheus scrapes it: the content type and the text.
async fn scrape(server: &Server) -> String {
    let resp = http().get(server.url("/metrics")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"],
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    resp.text().await.unwrap()
}

/// The value of the sample `series` (name and labels as exposed), if the text has it.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

#[tokio::test]
async fn metrics_are_openmetrics_text() {
    let (dir, server, _) = seeded_server(&[]).await;
    // Comparisons' state changes queue their GitHub reports; with no GitHub configured they wait.
    let url = format!("sqlite://{}", dir.path().join("dash.db").display());
    let backlog = benchgate_store::connect(&url)
        .await
        .unwrap()
        .outbox_backlog()
        .await
        .unwrap();
    let text = scrape(&server).await;
    for needle in [
        "# TYPE benchgate_queue_jobs gauge",
        "benchgate_queue_jobs{state=\"queued\"} 2",
        "benchgate_queue_jobs{state=\"running\"} 1",
        "benchgate_runners{status=\"busy\"} 1",
        "benchgate_runners{status=\"online\"} 1",
        "benchgate_runners{status=\"offline\"} 1",
        "# TYPE benchgate_job_duration_seconds histogram",
        "# UNIT benchgate_job_duration_seconds seconds",
        "# TYPE benchgate_github_api_errors counter",
        "benchgate_github_api_errors_total 0",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    assert_eq!(
        sample(&text, "benchgate_outbox_backlog"),
        Some(backlog as f64)
    );
    // An unlabelled histogram is exposed from the start: cumulative buckets, sum and count.
    let buckets: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("benchgate_webhook_duration_seconds_bucket{le="))
        .collect();
    assert!(buckets.len() > 5, "{text}");
    assert!(
        buckets
            .last()
            .unwrap()
            .starts_with("benchgate_webhook_duration_seconds_bucket{le=\"+Inf\"}")
    );
    assert_eq!(
        sample(&text, "benchgate_webhook_duration_seconds_sum"),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, "benchgate_webhook_duration_seconds_count"),
        Some(0.0)
    );
    assert!(text.ends_with("# EOF\n"), "{text}");
    // Every sample line is `name{labels} value` with a number for the value.
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (name, value) = line.rsplit_once(' ').unwrap();
        assert!(value.parse::<f64>().is_ok(), "{line}");
        assert!(name.starts_with("benchgate_"), "{line}");
    }
}

#[tokio::test]
async fn a_finished_job_and_an_answered_webhook_are_counted_and_timed_when_they_happen() {
    const SECRET: &str = "metrics-webhook-secret";
    let (dir, server, _) = seeded_server(&[("BENCHGATE_WEBHOOK_SECRET", SECRET)]).await;
    let url = format!("sqlite://{}", dir.path().join("dash.db").display());
    let store = benchgate_store::connect(&url).await.unwrap();
    let token = store
        .add_runner("metrics-probe", &[LABEL.into()])
        .await
        .unwrap()
        .token;
    let finished =
        "benchgate_job_duration_seconds_count{kind=\"comparison\",outcome=\"succeeded\"}";
    let before = scrape(&server).await;
    assert_eq!(sample(&before, finished), Some(0.0), "no job finished yet");
    assert_eq!(
        sample(&before, "benchgate_analysis_duration_seconds_count"),
        Some(0.0)
    );

    // An agent claims the queued comparison job and completes it.
    let claimed: benchgate_api::agent::ClaimedJob = http()
        .post(server.url("/api/v1/jobs/claim"))
        .bearer_auth(token.expose())
        .json(&benchgate_api::agent::ClaimRequest {
            labels: vec![],
            wait_secs: Some(0),
        })
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let resp = http()
        .post(server.url(&format!("/api/v1/jobs/{}/complete", claimed.job_id)))
        .bearer_auth(token.expose())
        .json(&benchgate_api::agent::CompleteRequest {
            lease_token: claimed.lease_token,
            outcome: benchgate_api::agent::JobOutcome::Succeeded { log_tail: None },
        })
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);

    // GitHub pings the hook; a forged delivery is refused.
    let body = br#"{"zen":"Keep it logically awesome.","hook_id":1}"#.to_vec();
    for (delivery, signature, status) in [
        ("ping-1", sign_with(SECRET.as_bytes(), &body), 202),
        ("forged", sign_with(b"not-the-secret", &body), 401),
    ] {
        let resp = http()
            .post(server.url("/webhooks/github"))
            .header("X-GitHub-Event", "ping")
            .header("X-GitHub-Delivery", delivery)
            .header("X-Hub-Signature-256", signature)
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), status, "{delivery}");
    }

    let after = scrape(&server).await;
    assert_eq!(sample(&after, finished), Some(1.0), "{after}");
    assert_eq!(
        sample(&after, "benchgate_analysis_duration_seconds_count"),
        Some(1.0)
    );
    assert_eq!(
        sample(&after, "benchgate_webhook_duration_seconds_count"),
        Some(2.0)
    );
    for (outcome, n) in [("ping", 1.0), ("unauthorized", 1.0)] {
        let series = format!("benchgate_webhook_deliveries_total{{outcome=\"{outcome}\"}}");
        assert_eq!(sample(&after, &series), Some(n), "{after}");
    }
}

#[tokio::test]
async fn a_dashboard_token_guards_pages_and_the_read_api() {
    let (_dir, server, _) = seeded_server(&[("BENCHGATE_DASHBOARD_TOKEN", "s3cret-token")]).await;
    for path in [
        "/",
        "/queue",
        "/runners/quiet-1",
        "/api/v1/runners",
        "/api/v1/queue",
    ] {
        let (status, _) = get(&server.url(path)).await;
        assert_eq!(status, 401, "{path} without the token");
    }
    let (status, _) = get(&server.url("/?token=wrong")).await;
    assert_eq!(status, 401);

    let resp = http()
        .get(server.url("/"))
        .bearer_auth("s3cret-token")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    let resp = http()
        .get(server.url("/queue?token=s3cret-token"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    let pair = cookie.split(';').next().unwrap().to_string();
    let resp = http()
        .get(server.url("/api/v1/runners"))
        .header("cookie", pair)
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        200,
        "the cookie set by ?token= works on every page"
    );

    let (status, _) = get(&server.url("/healthz")).await;
    assert_eq!(status, 200, "probes stay open");
}

#[tokio::test]
async fn unknown_runners_and_comparisons_are_404() {
    let (_dir, server, _) = seeded_server(&[]).await;
    for path in [
        "/runners/nobody",
        "/api/v1/runners/nobody",
        "/comparisons/999999",
        "/api/v1/comparisons/999999/samples.csv",
    ] {
        let (status, _) = get(&server.url(path)).await;
        assert_eq!(status, 404, "{path}");
    }
}

#[tokio::test]
async fn an_empty_installation_says_what_to_do_first() {
    let dir = tempfile::tempdir().unwrap();
    let server = spawn_server(
        &format!("sqlite://{}", dir.path().join("e.db").display()),
        &[],
    );
    let (status, home) = get(&server.url("/")).await;
    assert_eq!(status, 200);
    assert_contains(
        &home,
        &[
            "benchgate runner add NAME --labels",
            ".benchgate.toml",
            "No comparisons yet",
        ],
    );
}

#[tokio::test]
async fn names_from_outside_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("x.db").display());
    let store = benchgate_store::connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    let evil = "<script>alert(1)</script>";
    store
        .add_runner(evil, &["<b>label</b>".into()])
        .await
        .unwrap();
    drop(store);
    let server = spawn_server(&url, &[]);
    let (status, home) = get(&server.url("/")).await;
    assert_eq!(status, 200);
    assert!(!home.contains(evil) && !home.contains("<b>label"), "{home}");
    assert!(home.contains("&#60;script&#62;alert(1)"), "{home}");
}

/// The comparison list filtered by repository, PR, runner and verdict (page and JSON), and a
/// repository's own page.
#[tokio::test]
async fn comparisons_are_filtered_and_a_repository_lists_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("dash.db").display());
    let store = benchgate_store::connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    let s = seed_small(store.as_ref()).await;
    let gears = seed_second_repository(store.as_ref()).await;
    drop(store);
    let server = spawn_server(&url, &[]);
    let row = |id: i64| format!("<a href=\"/comparisons/{id}\">{id}</a>");

    let (status, all) = get(&server.url("/comparisons")).await;
    assert_eq!(status, 200);
    assert_contains(
        &all,
        &[
            &row(s.comparison_id),
            &row(s.running_comparison_id),
            &row(gears),
        ],
    );
    assert_contains(
        &all,
        &[
            "<form class=\"filters\"",
            "name=\"verdict\"",
            ">quiet-1</option>",
        ],
    );

    let cases = [
        ("?repository=acme/gears", vec![gears], vec![s.comparison_id]),
        (
            "?pr=42",
            vec![s.comparison_id],
            vec![gears, s.running_comparison_id],
        ),
        (
            "?runner=quiet-1",
            vec![s.comparison_id, s.running_comparison_id],
            vec![gears],
        ),
        (
            "?verdict=slower",
            vec![s.comparison_id],
            vec![gears, s.running_comparison_id],
        ),
        // What the form sends when only some fields are filled.
        (
            "?repository=&pr=&runner=&verdict=equivalent",
            vec![s.comparison_id],
            vec![gears],
        ),
    ];
    for (query, shown, hidden) in cases {
        let (status, page) = get(&server.url(&format!("/comparisons{query}"))).await;
        assert_eq!(status, 200, "{query}: {page}");
        for id in shown {
            assert!(page.contains(&row(id)), "{query} hides {id}:\n{page}");
        }
        for id in hidden {
            assert!(!page.contains(&row(id)), "{query} shows {id}:\n{page}");
        }
    }
    let (_, none) = get(&server.url("/comparisons?runner=old-box")).await;
    assert_contains(&none, &["No comparison matches"]);
    let (status, bad) = get(&server.url("/comparisons?verdict=worse")).await;
    assert_eq!(status, 400, "{bad}");
    assert_contains(&bad, &["unknown verdict", "no_result_yet"]);

    let (status, json) =
        get(&server.url("/api/v1/comparisons?repository=acme/widgets&verdict=slower")).await;
    assert_eq!(status, 200, "{json}");
    let list: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let ids: Vec<i64> = list.iter().map(|c| c["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [s.comparison_id]);

    let (status, repo) = get(&server.url("/repositories/acme/widgets")).await;
    assert_eq!(status, 200);
    assert_contains(
        &repo,
        &[
            "Repository acme/widgets",
            &row(s.comparison_id),
            &row(s.running_comparison_id),
        ],
    );
    assert!(!repo.contains(&row(gears)), "{repo}");
    let (_, repo_pr) = get(&server.url("/repositories/acme/widgets?pr=43")).await;
    assert!(
        repo_pr.contains(&row(s.running_comparison_id)) && !repo_pr.contains(&row(s.comparison_id)),
        "{repo_pr}"
    );
    let (_, home) = get(&server.url("/")).await;
    assert_contains(
        &home,
        &["href=\"/repositories/acme/gears\"", "href=\"/comparisons\""],
    );
}
