//! The control actions a team takes during a rehearsal, parsed from the control API's JSON
//! bodies and applied to the model. HTTP handlers and in-process callers use the same
//! [`Control::parse`] and [`Sim::apply`].

use super::backlog::QueueMode;
use super::fleet::{CRASHED, Instance};
use super::model::{Event, Sim};
use super::retry::{Layer, layer_from_str};
use serde_json::{Map, Value, json};

/// One control action.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "endpoint", rename_all = "kebab-case")]
pub enum Control {
    /// `layer` is `None` for all layers.
    Retries {
        layer: Option<Layer>,
        enabled: bool,
    },
    Deploy {
        version: String,
    },
    Rollback,
    Restart {
        pod: String,
    },
    Scale {
        replicas: u32,
    },
    Pool {
        size: u32,
    },
    Queue {
        action: QueueAction,
        /// The most jobs started per second (a paced drain); none: as fast as the worker runs.
        #[serde(skip_serializing_if = "Option::is_none")]
        rate: Option<f64>,
    },
    LoadShedding {
        enabled: bool,
    },
    Idempotency {
        enforced: bool,
    },
    Memory {
        limit_mb: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueAction {
    Pause,
    Resume,
    Drain,
}

/// A refused action: HTTP status, message, and the JSON field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{error}")]
pub struct ControlError {
    pub status: u16,
    pub error: String,
    pub field: Option<String>,
}

impl ControlError {
    fn bad(field: &str, error: String) -> Self {
        ControlError {
            status: 400,
            error,
            field: Some(field.to_string()),
        }
    }

    fn missing(field: &str, error: String) -> Self {
        ControlError {
            status: 404,
            error,
            field: Some(field.to_string()),
        }
    }

    /// The JSON body of the error answer.
    pub fn body(&self) -> Value {
        json!({ "error": self.error, "field": self.field })
    }
}

/// The endpoints under `/control/`, one per action.
pub const ENDPOINTS: [&str; 10] = [
    "retries",
    "deploy",
    "rollback",
    "restart",
    "scale",
    "pool",
    "queue",
    "load-shedding",
    "idempotency",
    "memory",
];

impl Control {
    /// Parse the body of `POST /control/{endpoint}` (an empty body is `{}`).
    pub fn parse(endpoint: &str, body: &[u8]) -> Result<Control, ControlError> {
        let value: Value = if body.iter().all(u8::is_ascii_whitespace) {
            Value::Object(Map::new())
        } else {
            serde_json::from_slice(body)
                .map_err(|e| ControlError::bad("", format!("the body is not valid JSON: {e}")))?
        };
        let Value::Object(obj) = value else {
            return Err(ControlError::bad(
                "",
                "the body must be a JSON object".into(),
            ));
        };
        let fields: &[&str] = match endpoint {
            "retries" => &["layer", "enabled"],
            "deploy" => &["version"],
            "rollback" => &[],
            "restart" => &["pod"],
            "scale" => &["replicas"],
            "pool" => &["size"],
            "queue" => &["action", "rate"],
            "load-shedding" => &["enabled"],
            "idempotency" => &["enforced"],
            "memory" => &["limit_mb"],
            other => {
                return Err(ControlError::missing(
                    "",
                    format!(
                        "no control endpoint \"{}\"; use one of {}",
                        crate::sanitize::line(other),
                        ENDPOINTS.join(", ")
                    ),
                ));
            }
        };
        if let Some(extra) = obj.keys().find(|k| !fields.contains(&k.as_str())) {
            let extra = crate::sanitize::line(extra).into_owned();
            return Err(ControlError::bad(
                &extra,
                format!("unknown field \"{extra}\"; expected {}", expected(fields)),
            ));
        }
        Ok(match endpoint {
            "retries" => {
                let layer = string(&obj, "layer")?;
                let layer = match layer.as_str() {
                    "all" => None,
                    name => Some(layer_from_str(name).ok_or_else(|| {
                        ControlError::bad(
                            "layer",
                            format!(
                                "unknown layer \"{}\"; use client, gateway, worker or all",
                                crate::sanitize::line(name)
                            ),
                        )
                    })?),
                };
                Control::Retries {
                    layer,
                    enabled: boolean(&obj, "enabled")?,
                }
            }
            "deploy" => Control::Deploy {
                version: string(&obj, "version")?,
            },
            "rollback" => Control::Rollback,
            "restart" => Control::Restart {
                pod: string(&obj, "pod")?,
            },
            "scale" => Control::Scale {
                replicas: number(&obj, "replicas", 1, 64)?,
            },
            "pool" => Control::Pool {
                size: number(&obj, "size", 1, 2000)?,
            },
            "queue" => Control::Queue {
                rate: match obj.get("rate") {
                    None | Some(Value::Null) => None,
                    Some(v) => match v.as_f64() {
                        Some(r) if r.is_finite() && (0.1..=100_000.0).contains(&r) => Some(r),
                        _ => {
                            return Err(ControlError::bad(
                                "rate",
                                "\"rate\" must be a number of jobs per second from 0.1 to 100000"
                                    .into(),
                            ));
                        }
                    },
                },
                action: match string(&obj, "action")?.as_str() {
                    "pause" => QueueAction::Pause,
                    "resume" => QueueAction::Resume,
                    "drain" => QueueAction::Drain,
                    other => {
                        return Err(ControlError::bad(
                            "action",
                            format!(
                                "unknown queue action \"{}\"; use pause, resume or drain",
                                crate::sanitize::line(other)
                            ),
                        ));
                    }
                },
            },
            "load-shedding" => Control::LoadShedding {
                enabled: boolean(&obj, "enabled")?,
            },
            "idempotency" => Control::Idempotency {
                enforced: boolean(&obj, "enforced")?,
            },
            _ => Control::Memory {
                limit_mb: number(&obj, "limit_mb", 64, 65_536)?,
            },
        })
    }
}

fn expected(fields: &[&str]) -> String {
    if fields.is_empty() {
        "no fields".into()
    } else {
        fields
            .iter()
            .map(|f| format!("\"{f}\""))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn field<'a>(obj: &'a Map<String, Value>, name: &str) -> Result<&'a Value, ControlError> {
    obj.get(name)
        .ok_or_else(|| ControlError::bad(name, format!("missing field \"{name}\"")))
}

fn string(obj: &Map<String, Value>, name: &str) -> Result<String, ControlError> {
    match field(obj, name)? {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        _ => Err(ControlError::bad(
            name,
            format!("\"{name}\" must be a non-empty string"),
        )),
    }
}

fn boolean(obj: &Map<String, Value>, name: &str) -> Result<bool, ControlError> {
    field(obj, name)?
        .as_bool()
        .ok_or_else(|| ControlError::bad(name, format!("\"{name}\" must be true or false")))
}

fn number(obj: &Map<String, Value>, name: &str, min: u64, max: u64) -> Result<u32, ControlError> {
    match field(obj, name)?.as_u64() {
        Some(n) if (min..=max).contains(&n) => Ok(n as u32),
        _ => Err(ControlError::bad(
            name,
            format!("\"{name}\" must be a whole number from {min} to {max}"),
        )),
    }
}

impl Sim {
    /// Apply a control action now. Returns the JSON answer of the control API.
    pub fn apply(&mut self, c: &Control) -> Result<Value, ControlError> {
        let now = self.now();
        let wrong = self.wrong_move(c);
        let detail = match c {
            Control::Retries { layer, enabled } => {
                let layers: Vec<Layer> = layer.map_or(Layer::ALL.to_vec(), |l| vec![l]);
                for l in &layers {
                    self.ledger.set_enabled(*l, *enabled);
                }
                let names: Vec<&str> = layers.iter().map(|l| l.as_str()).collect();
                format!("retries {} on {}", on_off(*enabled), names.join(", "))
            }
            Control::Deploy { version } => {
                let v = self.sc.version_index(version).ok_or_else(|| {
                    ControlError::missing(
                        "version",
                        format!(
                            "unknown version \"{}\"; known: {}",
                            crate::sanitize::line(version),
                            self.sc
                                .versions
                                .iter()
                                .map(|v| v.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })?;
                self.deploy_index(v);
                format!("deploy {version}")
            }
            Control::Rollback => {
                if self.deployed.len() < 2 {
                    return Err(ControlError {
                        status: 409,
                        error: "nothing to roll back to: only one version was ever deployed".into(),
                        field: None,
                    });
                }
                self.deployed.pop();
                let v = self.deployed.last().copied().unwrap_or(0);
                self.deploy_index(v);
                format!("rollback to {}", self.version())
            }
            Control::Restart { pod } => {
                let i = self
                    .instances
                    .iter()
                    .position(|i| &i.name == pod)
                    .ok_or_else(|| {
                        ControlError::missing(
                            "pod",
                            format!("no pod \"{}\"", crate::sanitize::line(pod)),
                        )
                    })?;
                self.restart_instance(i);
                format!("restart {pod}")
            }
            Control::Scale { replicas } => {
                self.scale(*replicas as usize);
                format!("scale to {replicas} replicas")
            }
            Control::Pool { size } => {
                self.settings.pool = *size;
                for inst in &mut self.instances {
                    inst.pool = *size as f64;
                }
                format!("pool size {size}")
            }
            Control::Queue { action, rate } => {
                self.backlog.mode = match action {
                    QueueAction::Pause => QueueMode::Paused,
                    QueueAction::Resume => QueueMode::Running,
                    QueueAction::Drain => QueueMode::Draining,
                };
                if *action != QueueAction::Pause {
                    self.backlog.rate = *rate;
                }
                let paced = match (action, rate) {
                    (QueueAction::Pause, _) | (_, None) => String::new(),
                    (_, Some(r)) => format!(" at {r} jobs/s"),
                };
                format!(
                    "queue {}{paced}",
                    serde_json::to_string(action)
                        .unwrap_or_default()
                        .trim_matches('"')
                )
            }
            Control::LoadShedding { enabled } => {
                self.settings.load_shedding = *enabled;
                format!("load shedding {}", on_off(*enabled))
            }
            Control::Idempotency { enforced } => {
                self.settings.idempotency_enforced = *enforced;
                format!(
                    "idempotency keys {}",
                    if *enforced {
                        "enforced"
                    } else {
                        "not enforced"
                    }
                )
            }
            Control::Memory { limit_mb } => {
                self.settings.memory_limit_mb = *limit_mb as f64;
                format!("memory limit {limit_mb} MB")
            }
        };
        self.score.note_action(now);

        self.events.push(Event {
            at_s: now,
            what: detail.clone(),
            mitigation: true,
            wrong: wrong.clone(),
        });
        let mut answer = json!({ "ok": true, "applied": detail, "at_s": now });
        if let Some(why) = wrong {
            answer["wrong_move"] = Value::String(why);
        }
        Ok(answer)
    }

    /// Why the scenario counts `c` as a wrong move in the state the fleet is in now, if it
    /// does.
    pub(crate) fn wrong_move(&self, c: &Control) -> Option<String> {
        use super::scenario::WrongMoveKind as Kind;
        self.sc.wrong_moves.iter().find_map(|w| {
            let wrong = match (w.kind, c) {
                (Kind::ScaleOut, Control::Scale { replicas }) => {
                    *replicas as usize > self.instances.len()
                }
                (Kind::FastDrain, Control::Queue { action, rate }) => {
                    let safe = w.rate.unwrap_or(f64::INFINITY);
                    let v = self.deployed.last().copied().unwrap_or(0);
                    let q = self.backlog.query;
                    let job_s = self.work[v][q] + self.hold[v][q];
                    let fastest = match (rate, action) {
                        (Some(r), _) => *r,
                        (None, QueueAction::Drain) => f64::INFINITY,
                        (None, _) => self.backlog.concurrency / job_s.max(1e-3),
                    };
                    *action != QueueAction::Pause
                        && fastest > safe
                        && self.backlog.depth > safe * 60.0
                }
                (Kind::PlainRestart, Control::Restart { .. }) => {
                    self.instances.len() <= self.sc.fleet.instances as usize
                        && self.settings.memory_limit_mb <= self.sc.fleet.memory_limit_mb
                }
                _ => false,
            };
            wrong.then(|| w.why.clone())
        })
    }

    fn scale(&mut self, replicas: usize) {
        let now = self.now();
        while self.instances.len() > replicas {
            let Some(mut gone) = self.instances.pop() else {
                break;
            };
            for w in gone.stop(now, 0.0) {
                for (k, &m) in w.mass.iter().enumerate() {
                    gone.codes[CRASHED] += m;
                    self.ledger.fail_fast(w.step, k, m);
                }
            }
        }
        let v = self.deployed.last().copied().unwrap_or(0);
        while self.instances.len() < replicas {
            let index = (0..)
                .find(|n| self.instances.iter().all(|i| i.index != *n))
                .unwrap_or(0);
            let mut inst = Instance::new(
                index,
                v,
                self.settings.pool as f64,
                self.sc.fleet.memory_base_mb,
            );
            inst.up = false;
            inst.ready_at = now + self.sc.fleet.restart_s;
            inst.factor = self.new_instance_factor();
            self.instances.push(inst);
        }
        self.instances.sort_by_key(|i| i.index);
    }
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}
