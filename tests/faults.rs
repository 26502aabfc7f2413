//! Faults a real deployment meets, against the real binary: a database that stops answering
//! (a TCP proxy in front of Postgres that stops forwarding). `/readyz` must say "not ready" and
//! webhooks must get a 503 GitHub can redeliver, both well inside GitHub's 10 s delivery
//! timeout, and everything must work again once the database answers.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::support::{FreshPostgres, Server, http, postgres_admin_url, spawn_server, wait_until};
use benchgate_github::signature::sign_with;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const SECRET: &str = "fault-secret";

/// A TCP proxy to Postgres that forwards until `hang` is set, then holds every connection
/// open without passing a byte (a database behind a broken network path).
pub(crate) struct HangingProxy {
    pub(crate) port: u16,
    pub(crate) hang: Arc<AtomicBool>,
    /// Bumped to cut every open connection, as a database restart does.
    generation: Arc<std::sync::atomic::AtomicU64>,
    /// One entry per connection accepted, holding the generation it was born in; gone (no
    /// strong reference left) once both its directions have closed.
    connections: Arc<Mutex<Vec<Weak<u64>>>>,
}

impl HangingProxy {
    pub(crate) async fn start(upstream: String) -> HangingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hang = Arc::new(AtomicBool::new(false));
        let generation = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let connections = Arc::new(Mutex::new(Vec::new()));
        let (flag, current, opened) = (hang.clone(), generation.clone(), connections.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let born = Arc::new(current.load(Ordering::SeqCst));
                opened.lock().unwrap().push(Arc::downgrade(&born));
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                let link = Link {
                    hang: flag.clone(),
                    generation: current.clone(),
                    born,
                };
                tokio::spawn(pipe(cr, sw, link.clone()));
                tokio::spawn(pipe(sr, cw, link));
            }
        });
        HangingProxy {
            port,
            hang,
            generation,
            connections,
        }
    }

    /// Closes every connection open now, as a restarting database does.
    pub(crate) fn cut_connections(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// How many connections opened before the last cut are still open.
    fn open_from_before_the_cut(&self) -> usize {
        let now = self.generation.load(Ordering::SeqCst);
        let connections = self.connections.lock().unwrap();
        connections
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|born| **born != now)
            .count()
    }
}

/// One proxied connection's view of the proxy's switches.
#[derive(Clone)]
struct Link {
    hang: Arc<AtomicBool>,
    generation: Arc<std::sync::atomic::AtomicU64>,
    born: Arc<u64>,
}

impl Link {
    fn cut(&self) -> bool {
        self.generation.load(Ordering::SeqCst) != *self.born
    }
}

async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    link: Link,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let read = tokio::time::timeout(Duration::from_millis(100), from.read(&mut buf)).await;
        if link.cut() {
            return; // dropping both halves closes the connection
        }
        let n = match read {
            Err(_) => continue,
            Ok(Ok(0) | Err(_)) => return,
            Ok(Ok(n)) => n,
        };
        // Bounded: the test ends long before; the sockets stay open meanwhile.
        let mut waited = 0;
        while link.hang.load(Ordering::SeqCst) && waited < 600 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            waited += 1;
        }
        if link.cut() || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// A client that gives up after 9 s: an answer after that would be a timeout at GitHub.
fn impatient() -> reqwest::Client {
    let _ = http(); // installs the TLS crypto provider
    reqwest::Client::builder()
        .timeout(Duration::from_secs(9))
        .build()
        .unwrap()
}

async fn ping(server: &Server, delivery: &str) -> u16 {
    let body = br#"{"zen":"Keep it logically awesome.","hook_id":1}"#.to_vec();
    impatient()
        .post(server.url("/webhooks/github"))
        .header("X-GitHub-Event", "ping")
        .header("X-GitHub-Delivery", delivery)
        .header("X-Hub-Signature-256", sign_with(SECRET.as_bytes(), &body))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .expect("an answer inside GitHub's 10 s delivery timeout")
        .status()
        .as_u16()
}

async fn readyz(server: &Server) -> u16 {
    impatient()
        .get(server.url("/readyz"))
        .send()
        .await
        .expect("an answer, not a hang")
        .status()
        .as_u16()
}

// Multi-threaded: the proxy's tasks run while the test thread blocks starting the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_database_gives_503s_inside_githubs_timeout_and_recovers() {
    let Some(admin) = postgres_admin_url() else {
        return;
    };
    let db = FreshPostgres::create(&admin);
    let (prefix, rest) = db.url.rsplit_once('@').expect("user@host in the test URL");
    let (host_port, name) = rest.split_once('/').unwrap();
    let proxy = HangingProxy::start(host_port.to_owned()).await;
    let via_proxy = format!("{prefix}@127.0.0.1:{}/{name}", proxy.port);
    let server = spawn_server(&via_proxy, &[("BENCHGATE_WEBHOOK_SECRET", SECRET)]);

    assert_eq!(readyz(&server).await, 200);
    assert_eq!(ping(&server, "before-the-hang").await, 202);

    proxy.hang.store(true, Ordering::SeqCst);
    let started = Instant::now();
    assert_eq!(readyz(&server).await, 503);
    let readyz_took = started.elapsed();
    let started = Instant::now();
    assert_eq!(ping(&server, "during-the-hang").await, 503);
    let webhook_took = started.elapsed();
    // The figures for docs/reliability.md; the bounds themselves are the client timeouts.
    eprintln!(
        "hung database: /readyz 503 after {readyz_took:?}, webhook 503 after {webhook_took:?}"
    );

    proxy.hang.store(false, Ordering::SeqCst);
    wait_until(
        "/readyz to answer 200 again",
        Duration::from_secs(60),
        async || match readyz(&server).await {
            200 => Ok(()),
            other => Err(other),
        },
    )
    .await;
    // GitHub's redelivery of the refused delivery is recorded now.
    assert_eq!(ping(&server, "during-the-hang").await, 202);
    assert_eq!(ping(&server, "during-the-hang").await, 200, "and only once");

    // The database restarts: every pooled connection breaks. The server answers 503 at worst
    // (a retry), never a 500 loop, and is ready again with fresh connections.
    proxy.cut_connections();
    let what = "every pooled connection to close";
    wait_until(what, Duration::from_secs(30), async || {
        match proxy.open_from_before_the_cut() {
            0 => Ok(()),
            open => Err(format!("{open} still open")),
        }
    })
    .await;
    let mut answers = Vec::new();
    let what = "the delivery after the restart to be recorded";
    wait_until(what, Duration::from_secs(60), async || {
        let status = ping(&server, "after-the-restart").await;
        answers.push(status);
        assert!(
            status == 202 || status == 503,
            "answers after the restart: {answers:?}"
        );
        if status == 202 {
            Ok(())
        } else {
            Err(format!("answers {answers:?}"))
        }
    })
    .await;
    assert_eq!(readyz(&server).await, 200);
    eprintln!("after a database restart the first deliveries were answered {answers:?}");
}

/// Large bodies in flight share a memory budget, charged as their bytes arrive: while one
/// delivery is still being received, another that would pass the budget gets 503 with Retry-After (GitHub redelivers), and once
/// the first is answered the budget is free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_deliveries_past_the_memory_budget_get_503_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bg.db").display());
    let server = spawn_server(
        &url,
        &[
            ("BENCHGATE_WEBHOOK_SECRET", SECRET),
            ("BENCHGATE_WEBHOOK_MEMORY_MIB", "2"),
        ],
    );
    let size = 1_500_000;
    // The first delivery: headers and half its body, then it waits.
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /webhooks/github HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: ping\r\n\
         X-GitHub-Delivery: slow\r\nX-Hub-Signature-256: sha256=00\r\n\
         Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    slow.write_all(&vec![b' '; size / 2]).await.unwrap();
    // The server charges the budget for the bytes it has read, so once it has read all that
    // was sent the first holds its half body's share.
    let client = slow.local_addr().unwrap();
    let what = "the server to read the first delivery's half body";
    wait_until(what, Duration::from_secs(30), async || {
        match unread_bytes(client, server.addr) {
            0 => Ok(()),
            unread => Err(format!("{unread} bytes unread")),
        }
    })
    .await;

    let big = vec![b' '; size];
    let resp = impatient()
        .post(server.url("/webhooks/github"))
        .header("X-GitHub-Event", "ping")
        .header("X-GitHub-Delivery", "second")
        .header("X-Hub-Signature-256", sign_with(SECRET.as_bytes(), &big))
        .body(big.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 503);
    assert_eq!(resp.headers()["retry-after"], "5");
    let body: serde_json::Value = resp.json().await.unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("redeliver"),
        "{body}"
    );

    // The first one completes (its signature is wrong: 401), and the budget is free again.
    slow.write_all(&vec![b' '; size - size / 2]).await.unwrap();
    let mut answer = vec![0u8; 64];
    let n = slow.read(&mut answer).await.unwrap();
    let status_line = String::from_utf8_lossy(&answer[..n]).into_owned();
    assert!(status_line.starts_with("HTTP/1.1 401"), "{status_line}");
    let resp = impatient()
        .post(server.url("/webhooks/github"))
        .header("X-GitHub-Event", "ping")
        .header("X-GitHub-Delivery", "second")
        .header("X-Hub-Signature-256", sign_with(SECRET.as_bytes(), &big))
        .body(big)
        .send()
        .await
        .unwrap();
    // Signed but not JSON: refused for what it is, no longer for the budget.
    assert_eq!(resp.status().as_u16(), 400);
}

/// Bytes the local TCP connection `client` sent to `server` that the server process has not
/// read yet: what the client has not had acknowledged plus the server's receive queue, as
/// /proc/net/tcp shows both ends.
pub(crate) fn unread_bytes(client: SocketAddr, server: SocketAddr) -> u64 {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let port = |address: &str| u16::from_str_radix(address.rsplit(':').next().unwrap(), 16);
    let mut unread = 0;
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let ends = (port(fields[1]).unwrap(), port(fields[2]).unwrap());
        let (tx, rx) = fields[4].split_once(':').unwrap();
        let queue = |hex: &str| u64::from_str_radix(hex, 16).unwrap();
        if ends == (client.port(), server.port()) {
            unread += queue(tx);
        } else if ends == (server.port(), client.port()) {
            unread += queue(rx);
        }
    }
    unread
}

/// kill -9 the server in the middle of a burst of signed deliveries: every delivery that was
/// answered 202 is recorded (its redelivery is a duplicate), and every one that got no answer
/// is recorded once GitHub redelivers it to the restarted server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_during_a_webhook_burst_loses_no_accepted_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bg.db").display());
    let env = [("BENCHGATE_WEBHOOK_SECRET", SECRET)];
    let mut server = spawn_server(&url, &env);
    let deliveries: Vec<String> = (0..60).map(|i| format!("burst-{i}")).collect();
    // Four senders in parallel, each delivery after the previous one's answer; the server is
    // killed once ten have been answered, with the others in flight or not sent yet.
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ten_answered = Arc::new(tokio::sync::Notify::new());
    let senders: Vec<_> = deliveries
        .chunks(15)
        .map(|chunk| {
            let url = server.url("/webhooks/github");
            let (chunk, answered, ten) = (chunk.to_vec(), answered.clone(), ten_answered.clone());
            tokio::spawn(async move {
                let mut out = Vec::new();
                for d in chunk {
                    let status = send_ping(&url, &d).await;
                    if answered.fetch_add(1, Ordering::SeqCst) + 1 == 10 {
                        ten.notify_one();
                    }
                    out.push((d, status));
                }
                out
            })
        })
        .collect();
    tokio::time::timeout(Duration::from_secs(60), ten_answered.notified())
        .await
        .expect("ten deliveries answered within a minute");
    server.child.kill().unwrap();
    let _ = server.child.wait();
    let mut accepted = Vec::new();
    for sender in senders {
        for (delivery, status) in sender.await.unwrap() {
            match status {
                Some(202) => accepted.push(delivery),
                Some(other) => panic!("{delivery}: answered {other} before the kill"),
                None => {}
            }
        }
    }
    eprintln!(
        "{} of {} deliveries answered 202 before kill -9",
        accepted.len(),
        deliveries.len()
    );
    assert!(
        accepted.len() >= 10 && accepted.len() < deliveries.len(),
        "{}",
        accepted.len()
    );

    let server = spawn_server(&url, &env);
    let target = server.url("/webhooks/github");
    for d in &deliveries {
        let answer = send_ping(&target, d).await;
        if accepted.contains(d) {
            assert_eq!(answer, Some(200), "{d} was accepted before the kill");
        } else {
            // Recorded now (202), or committed just before the kill took its answer (200).
            assert!(matches!(answer, Some(200 | 202)), "{d}: {answer:?}");
        }
    }
    // And each is recorded exactly once.
    for d in &deliveries {
        assert_eq!(send_ping(&target, d).await, Some(200), "{d}");
    }
}

/// A signed ping; `None` when the connection died before an answer.
async fn send_ping(url: &str, delivery: &str) -> Option<u16> {
    let body = br#"{"zen":"Design for failure.","hook_id":1}"#.to_vec();
    impatient()
        .post(url)
        .header("X-GitHub-Event", "ping")
        .header("X-GitHub-Delivery", delivery)
        .header("X-Hub-Signature-256", sign_with(SECRET.as_bytes(), &body))
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .ok()
        .map(|r| r.status().as_u16())
}
