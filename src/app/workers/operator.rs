//! The console as the runbook executor's [`Operator`]: a confirmation or a decision becomes a
//! message into `update` (which shows a dialog), and the answer goes back over a oneshot. If the
//! console goes away without answering, the answer is no (abort): nothing acts unattended.

use crate::app::msg::Msg;
use crate::runbook::batch::Decision;
use crate::runbook::operator::{Confirmation, Consent, Operator};
use futures::FutureExt;
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// What the executor asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// Type `word` to go ahead.
    Confirm(Confirmation),
    /// A step failed: continue, retry or abort.
    Decide { step: String, reason: String },
}

/// The operator's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Confirmed(bool),
    /// Not confirmed; go on without the step (a skippable step only).
    Skipped,
    Decided(Decision),
}

/// Where an answer goes: used once; later sends do nothing.
#[derive(Clone)]
pub struct Reply(Arc<Mutex<Option<oneshot::Sender<Answer>>>>);

impl Reply {
    /// A reply and the receiver its answer arrives on.
    pub fn new() -> (Reply, oneshot::Receiver<Answer>) {
        let (tx, rx) = oneshot::channel();
        (Reply(Arc::new(Mutex::new(Some(tx)))), rx)
    }

    /// Send the answer (the first one only).
    pub fn send(&self, answer: Answer) {
        if let Some(tx) = self.0.lock().ok().and_then(|mut g| g.take()) {
            let _ = tx.send(answer);
        }
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reply")
    }
}

impl PartialEq for Reply {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The executor's operator for one run in the console.
pub struct ConsoleOperator {
    pub run_id: String,
    pub tx: mpsc::UnboundedSender<Msg>,
}

impl ConsoleOperator {
    fn ask(&self, question: Question) -> BoxFuture<'static, Option<Answer>> {
        let (reply, rx) = Reply::new();
        let sent = self
            .tx
            .send(Msg::Ask {
                run_id: self.run_id.clone(),
                question,
                reply,
            })
            .is_ok();
        async move {
            if !sent {
                return None;
            }
            rx.await.ok()
        }
        .boxed()
    }
}

impl Operator for ConsoleOperator {
    fn confirm(&self, c: &Confirmation) -> BoxFuture<'static, Consent> {
        let answer = self.ask(Question::Confirm(c.clone()));
        async move {
            match answer.await {
                Some(Answer::Confirmed(true)) => Consent::Given,
                Some(Answer::Skipped) => Consent::Skipped,
                _ => Consent::Refused,
            }
        }
        .boxed()
    }

    fn decide(&self, step: &str, reason: &str) -> BoxFuture<'static, Decision> {
        let answer = self.ask(Question::Decide {
            step: step.to_string(),
            reason: reason.to_string(),
        });
        async move {
            match answer.await {
                Some(Answer::Decided(d)) => d,
                _ => Decision::Abort,
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn questions_arrive_as_messages_and_a_dropped_reply_means_no() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let op = ConsoleOperator {
            run_id: "r1".into(),
            tx,
        };
        let c = Confirmation {
            step: "rollback".into(),
            summary: "Roll back".into(),
            word: "rollback".into(),
            skippable: false,
        };
        let yes = tokio::spawn(op.confirm(&c));
        let Some(Msg::Ask {
            reply, question, ..
        }) = rx.recv().await
        else {
            panic!("no question")
        };
        assert_eq!(question, Question::Confirm(c.clone()));
        reply.send(Answer::Confirmed(true));
        reply.send(Answer::Confirmed(false));
        assert_eq!(yes.await.unwrap(), Consent::Given);

        let no = tokio::spawn(op.confirm(&c));
        let Some(Msg::Ask { reply, .. }) = rx.recv().await else {
            panic!("no question")
        };
        drop(reply);
        assert_eq!(
            no.await.unwrap(),
            Consent::Refused,
            "an unanswered question is a no"
        );

        let skip = tokio::spawn(op.confirm(&c));
        let Some(Msg::Ask { reply, .. }) = rx.recv().await else {
            panic!("no question")
        };
        reply.send(Answer::Skipped);
        assert_eq!(skip.await.unwrap(), Consent::Skipped);

        let d = tokio::spawn(op.decide("restart", "gate failed"));
        let Some(Msg::Ask { reply, .. }) = rx.recv().await else {
            panic!("no question")
        };
        reply.send(Answer::Decided(Decision::Retry));
        assert_eq!(d.await.unwrap(), Decision::Retry);
    }
}
