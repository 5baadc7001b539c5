//! The console's Alertmanager silences (issue 35), off the loop: count what some matchers
//! select now, make a silence, extend one, expire some. Each answer comes back as a
//! [`Msg`]; the records they give are the CLI's (the same functions of
//! [`crate::alerts::silence`] make them), appended by `update` like every other record.

use crate::alerts::silence::{self, CREATE_ATTEMPTS, SilenceClient, SilenceSpec};
use crate::app::msg::Msg;
use crate::incident::event::SilenceRecord;
use chrono::{DateTime, Utc};
use std::time::Duration;
use tokio::sync::mpsc;

/// What the console asks of Alertmanager.
#[derive(Debug, Clone, PartialEq)]
pub enum Order {
    /// Count the alerts these matchers select now; answers as `Msg::SilenceCounted`.
    Count(Box<SilenceSpec>),
    /// Make this silence (checked against `ceiling`, a broad matcher let through when
    /// `broad_confirmed`); answers as `Msg::Silenced`.
    Make {
        spec: Box<SilenceSpec>,
        ceiling: Duration,
        broad_confirmed: bool,
    },
    /// Move silence `id`'s end to `until`; answers as `Msg::Silenced`.
    Extend {
        id: String,
        until: DateTime<Utc>,
        author: String,
    },
    /// Expire these silences; answers as `Msg::Silenced`.
    Expire {
        silences: Vec<SilenceRecord>,
        author: String,
    },
}

/// What a make, extend or expire did: the records to append, and why the rest failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub records: Vec<SilenceRecord>,
    pub error: Option<String>,
}

/// Does `order` in its own task with `client` (`None`: no Alertmanager is configured).
pub fn spawn(order: Order, client: Option<SilenceClient>, tx: &mpsc::UnboundedSender<Msg>) {
    let tx = tx.clone();
    let Some(client) = client else {
        let error = "no Alertmanager is configured: set [alertmanager] url".to_string();
        let _ = tx.send(match order {
            Order::Count(spec) => Msg::SilenceCounted {
                spec,
                result: Err(error),
            },
            _ => Msg::Silenced(Report {
                records: Vec::new(),
                error: Some(error),
            }),
        });
        return;
    };
    tokio::spawn(async move {
        let _ = tx.send(run(order, &client).await);
    });
}

async fn run(order: Order, client: &SilenceClient) -> Msg {
    let report = |r: Result<Vec<SilenceRecord>, silence::SilenceError>| match r {
        Ok(records) => Report {
            records,
            error: None,
        },
        Err(e) => Report {
            records: Vec::new(),
            error: Some(e.to_string()),
        },
    };
    match order {
        Order::Count(spec) => {
            let result =
                (client.matching_alerts(&spec.matchers()).await).map_err(|e| e.to_string());
            Msg::SilenceCounted { spec, result }
        }
        Order::Make {
            spec,
            ceiling,
            broad_confirmed,
        } => {
            let made =
                silence::make(client, &spec, ceiling, broad_confirmed, CREATE_ATTEMPTS).await;
            Msg::Silenced(report(made.map(|r| vec![r])))
        }
        Order::Extend { id, until, author } => Msg::Silenced(report(
            silence::extend(client, &id, until, &author, CREATE_ATTEMPTS).await,
        )),
        Order::Expire { silences, author } => {
            Msg::Silenced(expire(client, silences, &author).await)
        }
    }
}

/// Expires each silence in turn; the first failure stops the rest (said in the report).
async fn expire(client: &SilenceClient, silences: Vec<SilenceRecord>, author: &str) -> Report {
    let mut records = Vec::new();
    for s in silences {
        match silence::expire_recorded(client, &s.id, s.matchers.clone(), author).await {
            Ok(Some(r)) => records.push(r),
            // Already expired in Alertmanager: the journal learns it too.
            Ok(None) => records.push(SilenceRecord {
                change: crate::incident::event::SilenceChange::Expired,
                until: Utc::now(),
                author: author.to_string(),
                ..s
            }),
            Err(e) => {
                return Report {
                    records,
                    error: Some(e.to_string()),
                };
            }
        }
    }
    Report {
        records,
        error: None,
    }
}
