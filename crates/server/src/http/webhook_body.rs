//! Receiving a webhook body before anyone knows who sent it: every delivery is a stranger's
//! until its signature is checked, and that needs the whole body. A stranger may claim a large
//! body and send nothing, or send it a byte at a time; neither may keep a signed delivery out.
//!
//! Three limits, all of this process (each replica guards its own memory):
//! - **memory budget**, charged as bytes arrive (what the buffer holds), never from the
//!   `Content-Length` a client claims: a connection that sends headers and waits holds nothing;
//! - **deadline**: a body not complete [`BODY_DEADLINE`] after its headers is dropped with 408,
//!   which frees its slot and its bytes;
//! - **bodies in flight**: at most [`BODIES_IN_FLIGHT`] at once; one more gets 503 with
//!   Retry-After at once instead of queueing behind them.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::{Body, HttpBody};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// GitHub caps payloads at 25 MB; a larger body is answered 413 (unread when it says so).
pub const WEBHOOK_BODY_LIMIT: usize = 25 * 1024 * 1024;

/// How long a body may take to arrive after its headers: GitHub's own delivery timeout, so a
/// delivery GitHub still waits for is never cut, and a stranger's stalled body is.
pub const BODY_DEADLINE: Duration = Duration::from_secs(10);

/// Bodies received at once. Sized against the default budget (100 MiB): a stranger's
/// connection costs its slot and only the bytes it sent before the deadline, so 64 stalled
/// bodies hold nothing and 64 trickling at 1 KB/s hold under 1 MiB; the budget still holds a
/// full 25 MiB delivery beside them with more than 70 MiB to spare. To spend the budget
/// instead, strangers must send 75 MiB every [`BODY_DEADLINE`] (a flood, which no budget tells
/// from deliveries). To take every slot they must hold 64 connections open at once and open
/// them again every 10 s; against that, limit connections per address in the proxy in front
/// (docs/operations.md). GitHub sends one delivery at a time per hook, each received in well
/// under a second, so its own deliveries never come near the cap.
pub const BODIES_IN_FLIGHT: usize = 64;

/// The limits webhook bodies share in this process; cheap to clone.
#[derive(Clone)]
pub struct WebhookIntake {
    /// KiB of body buffers held at once.
    budget: Arc<Semaphore>,
    /// Bodies being received at once.
    in_flight: Arc<Semaphore>,
}

/// A body received whole; its share of the budget is held until it is dropped.
pub struct ReceivedBody {
    pub bytes: Vec<u8>,
    _budget: Option<OwnedSemaphorePermit>,
}

/// Why a body was not received; answered as its status says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyRefusal {
    /// Every slot is taken: 503 with Retry-After.
    TooManyBodies,
    /// The memory budget is spent: 503 with Retry-After.
    OverBudget,
    /// Over [`WEBHOOK_BODY_LIMIT`] (or the server's body limit): 413.
    TooLarge,
    /// Not complete within [`BODY_DEADLINE`]: 408.
    TooSlow,
    /// The connection broke mid-body: 400 (nobody is left to read it).
    Broken,
}

impl BodyRefusal {
    /// The outcome counted in `benchgate_webhook_deliveries_total`.
    pub fn outcome(self) -> &'static str {
        match self {
            BodyRefusal::TooManyBodies => "too_many_bodies",
            BodyRefusal::OverBudget => "over_budget",
            BodyRefusal::TooLarge => "too_large",
            BodyRefusal::TooSlow => "body_timeout",
            BodyRefusal::Broken => "bad_request",
        }
    }
}

impl IntoResponse for BodyRefusal {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            BodyRefusal::TooManyBodies => (
                StatusCode::SERVICE_UNAVAILABLE,
                "too many deliveries in flight; redeliver shortly".to_owned(),
            ),
            BodyRefusal::OverBudget => (
                StatusCode::SERVICE_UNAVAILABLE,
                "too many large deliveries at once; redeliver shortly".to_owned(),
            ),
            BodyRefusal::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("a delivery is at most {WEBHOOK_BODY_LIMIT} bytes"),
            ),
            BodyRefusal::TooSlow => (
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the body did not arrive within {} s",
                    BODY_DEADLINE.as_secs()
                ),
            ),
            BodyRefusal::Broken => (
                StatusCode::BAD_REQUEST,
                "the body could not be read".to_owned(),
            ),
        };
        let mut response = (status, Json(json!({ "error": message }))).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response
    }
}

impl WebhookIntake {
    /// Limits for a process that may hold `memory_mib` MiB of webhook bodies at once.
    pub fn new(memory_mib: u32) -> Self {
        WebhookIntake {
            budget: Arc::new(Semaphore::new(memory_mib as usize * 1024)),
            in_flight: Arc::new(Semaphore::new(BODIES_IN_FLIGHT)),
        }
    }

    /// Reads `body` whole within the three limits.
    pub async fn receive(
        &self,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<ReceivedBody, BodyRefusal> {
        let claimed = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if claimed.is_some_and(|n| n > WEBHOOK_BODY_LIMIT as u64) {
            return Err(BodyRefusal::TooLarge);
        }
        let _slot = self
            .in_flight
            .clone()
            .try_acquire_owned()
            .map_err(|_| BodyRefusal::TooManyBodies)?;
        tokio::time::timeout(BODY_DEADLINE, self.collect(body))
            .await
            .map_err(|_| BodyRefusal::TooSlow)?
    }

    /// The body's bytes, the budget charged for the buffer's capacity before it grows.
    async fn collect(&self, mut body: Body) -> Result<ReceivedBody, BodyRefusal> {
        let mut bytes: Vec<u8> = Vec::new();
        let mut held: Option<OwnedSemaphorePermit> = None;
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            let frame = frame.map_err(|e| refusal_of(&e))?;
            let Ok(data) = frame.into_data() else {
                continue; // trailers
            };
            let needed = bytes.len() + data.len();
            if needed > WEBHOOK_BODY_LIMIT {
                return Err(BodyRefusal::TooLarge);
            }
            if needed > bytes.capacity() {
                let grown = needed.max(bytes.capacity() * 2).min(WEBHOOK_BODY_LIMIT);
                let held_kib = held.as_ref().map_or(0, |p| p.num_permits());
                let more = kib(grown).saturating_sub(held_kib);
                let permit = self
                    .budget
                    .clone()
                    .try_acquire_many_owned(u32::try_from(more).unwrap_or(u32::MAX))
                    .map_err(|_| {
                        tracing::warn!(
                            bytes = needed,
                            "webhook memory budget spent; 503 with Retry-After"
                        );
                        BodyRefusal::OverBudget
                    })?;
                match &mut held {
                    Some(h) => h.merge(permit),
                    None => held = Some(permit),
                }
                bytes.reserve_exact(grown - bytes.len());
            }
            bytes.extend_from_slice(&data);
        }
        Ok(ReceivedBody {
            bytes,
            _budget: held,
        })
    }
}

/// KiB the budget is charged for a buffer of `bytes`.
fn kib(bytes: usize) -> usize {
    bytes.div_ceil(1024)
}

/// A body error from the server's own body limit is a 413; anything else a broken connection.
fn refusal_of(e: &axum::Error) -> BodyRefusal {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<http_body_util::LengthLimitError>() {
            return BodyRefusal::TooLarge;
        }
        source = s.source();
    }
    BodyRefusal::Broken
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The budget holds what the buffer holds, from the first byte, and gives it back.
    #[tokio::test]
    async fn the_budget_is_charged_for_bytes_received_not_claimed() {
        let intake = WebhookIntake::new(1);
        let mut claims_a_lot = HeaderMap::new();
        claims_a_lot.insert(header::CONTENT_LENGTH, HeaderValue::from_static("20000000"));
        let body = intake
            .receive(&claims_a_lot, Body::from(&b"{\"zen\":\"x\"}"[..]))
            .await
            .unwrap();
        assert_eq!(body.bytes, b"{\"zen\":\"x\"}");
        assert_eq!(intake.budget.available_permits(), 1024 - 1);
        drop(body);
        assert_eq!(intake.budget.available_permits(), 1024);
        // Past the budget: 503, and nothing stays held.
        static BIG: [u8; 700 * 1024] = [b' '; 700 * 1024];
        let held = intake
            .receive(&HeaderMap::new(), Body::from(&BIG[..]))
            .await
            .unwrap();
        let refused = intake
            .receive(&HeaderMap::new(), Body::from(&BIG[..]))
            .await;
        assert_eq!(refused.err(), Some(BodyRefusal::OverBudget));
        drop(held);
        assert_eq!(intake.budget.available_permits(), 1024);
    }
}
