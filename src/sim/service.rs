//! The simulator as a shared service: the model behind one lock, the idempotency keys of the
//! control API, and the in-process entry points the embedded metrics store uses. The HTTP
//! handlers are thin wrappers over [`SimService::control`], [`SimService::metrics_text`],
//! [`SimService::state`].

use super::control::{Control, ControlError};
use super::exposition::{self, Sample};
use super::model::Sim;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

/// Idempotency keys remembered (the oldest are forgotten first).
const KEYS: usize = 10_000;
/// Steps one call to [`SimService::advance_to`] may take (an hour), so a stalled clock
/// catching up never holds the lock for long.
const MAX_STEPS_PER_ADVANCE: u64 = 7200;

/// The answer to a control call: HTTP status and JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
    /// True when an earlier answer was replayed for the same idempotency key.
    pub replayed: bool,
}

#[derive(Debug)]
struct Inner {
    sim: Sim,
    keys: HashMap<String, (String, Value, Reply)>,
    order: VecDeque<String>,
}

/// The model shared between the clock task, the HTTP handlers and in-process callers.
#[derive(Debug)]
pub struct SimService {
    inner: Mutex<Inner>,
    speed: f64,
}

impl SimService {
    pub fn new(sim: Sim, speed: f64) -> Self {
        SimService {
            inner: Mutex::new(Inner {
                sim,
                keys: HashMap::new(),
                order: VecDeque::new(),
            }),
            speed,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while stepping would leave a half-updated model; the model has no panics
        // on its paths, so a poisoned lock is still the best state there is.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Simulated seconds per wall-clock second.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Run the model up to simulated second `t` (at most an hour per call).
    pub fn advance_to(&self, t: f64) {
        let mut inner = self.lock();
        let limit = inner.sim.step_index() + MAX_STEPS_PER_ADVANCE;
        while inner.sim.now() + super::STEP_S / 2.0 < t && inner.sim.step_index() < limit {
            inner.sim.step();
        }
    }

    /// Read the model.
    pub fn with_sim<R>(&self, f: impl FnOnce(&Sim) -> R) -> R {
        f(&self.lock().sim)
    }

    /// The current samples as data (for the embedded store), at simulated time `.1`.
    pub fn samples(&self) -> (Vec<Sample>, f64) {
        let (families, now) = {
            let inner = self.lock();
            (exposition::families(&inner.sim), inner.sim.now())
        };
        (exposition::samples_of(families), now)
    }

    /// `/metrics`: the Prometheus text format.
    pub fn metrics_text(&self) -> String {
        let families = exposition::families(&self.lock().sim);
        exposition::render_families(families)
    }

    /// `/state`.
    pub fn state(&self) -> Value {
        super::state::state(&self.lock().sim, self.speed)
    }

    /// Apply `POST /control/{endpoint}` with this body and optional `Idempotency-Key`. The same
    /// key with the same endpoint and body replays the first answer without acting again; the
    /// same key with anything else is refused with 422.
    pub fn control(&self, endpoint: &str, body: &[u8], key: Option<&str>) -> Reply {
        if let Some(k) = key
            && (k.is_empty() || k.len() > 200 || !k.bytes().all(|b| b.is_ascii_graphic()))
        {
            return error(ControlError {
                status: 400,
                error: "the Idempotency-Key must be 1 to 200 printable ASCII characters".into(),
                field: Some("Idempotency-Key".into()),
            });
        }
        let fingerprint: Value = serde_json::from_slice(body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
        let mut inner = self.lock();
        if let Some(k) = key
            && let Some((ep, fp, reply)) = inner.keys.get(k)
        {
            if ep == endpoint && *fp == fingerprint {
                let mut r = reply.clone();
                r.replayed = true;
                return r;
            }
            return error(ControlError {
                status: 422,
                error: format!(
                    "Idempotency-Key \"{k}\" was already used for a different request \
                     (POST /control/{}); use a new key for a new request",
                    crate::sanitize::line(ep)
                ),
                field: Some("Idempotency-Key".into()),
            });
        }
        let reply = match Control::parse(endpoint, body).and_then(|c| inner.sim.apply(&c)) {
            Ok(body) => Reply {
                status: 200,
                body,
                replayed: false,
            },
            Err(e) => error(e),
        };
        if let Some(k) = key {
            if inner.order.len() >= KEYS
                && let Some(old) = inner.order.pop_front()
            {
                inner.keys.remove(&old);
            }
            inner.order.push_back(k.to_string());
            inner.keys.insert(
                k.to_string(),
                (endpoint.to_string(), fingerprint, reply.clone()),
            );
        }
        reply
    }
}

fn error(e: ControlError) -> Reply {
    Reply {
        status: e.status,
        body: json!({ "error": e.error, "field": e.field }),
        replayed: false,
    }
}
