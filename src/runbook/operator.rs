//! The operator: confirms destructive steps by typing a word, and decides at pauses. The
//! console implements [`Operator`] with dialogs; the headless CLI reads lines from stdin;
//! `--yes` confirms everything but never continues past a failure (it aborts).

use super::batch::Decision;
use futures::FutureExt;
use futures::future::BoxFuture;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

/// A destructive step waiting for confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    pub step: String,
    /// What will happen (one or more plan lines).
    pub summary: String,
    /// The exact text the operator must type: the step id, the target, or `batch N`.
    pub word: String,
    /// The runbook lets the run go on without this step (`skippable = true`).
    pub skippable: bool,
}

/// The operator's answer to a [`Confirmation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consent {
    /// The word was typed: go ahead.
    Given,
    /// Not confirmed: the step does not act and the run stops.
    Refused,
    /// Not confirmed, and the run goes on without the step (only where it is skippable; elsewhere
    /// the executor takes it as [`Consent::Refused`]).
    Skipped,
}

/// Someone (or something) that confirms and decides.
pub trait Operator: Send + Sync {
    /// [`Consent::Given`] only when the operator typed exactly `c.word`. The default answer is
    /// no.
    fn confirm(&self, c: &Confirmation) -> BoxFuture<'static, Consent>;
    /// The decision at a pause after a failure; `reason` says what happened.
    fn decide(&self, step: &str, reason: &str) -> BoxFuture<'static, Decision>;
    /// True when confirmations come without a person (`--yes`): the journal says so.
    fn automatic(&self) -> bool {
        false
    }
}

/// Whether a typed line confirms `word`: exactly the word (a trailing newline aside). Enter
/// alone, end of input, partial words, other case, Ctrl-C: no.
pub fn typed_confirms(line: Option<&str>, word: &str) -> bool {
    match line {
        Some(l) => !word.is_empty() && l.trim_end_matches(['\n', '\r']) == word,
        None => false,
    }
}

/// The decision a typed line means; `None` when it means nothing (ask again or abort).
pub fn typed_decision(line: &str) -> Option<Decision> {
    match line.trim().to_ascii_lowercase().as_str() {
        "continue" | "c" => Some(Decision::Continue),
        "retry" | "r" => Some(Decision::Retry),
        "abort" | "a" => Some(Decision::Abort),
        _ => None,
    }
}

/// `--yes`: confirms every step; aborts at the first failure (never continues silently).
#[derive(Debug, Default, Clone, Copy)]
pub struct AssumeYes;

impl Operator for AssumeYes {
    fn confirm(&self, _c: &Confirmation) -> BoxFuture<'static, Consent> {
        async { Consent::Given }.boxed()
    }
    fn decide(&self, _step: &str, _reason: &str) -> BoxFuture<'static, Decision> {
        async { Decision::Abort }.boxed()
    }
    fn automatic(&self) -> bool {
        true
    }
}

/// Reads answers line by line (stdin in the CLI, a script in tests); prompts go to `prompt`.
pub struct LineOperator {
    input: Arc<Mutex<Box<dyn BufRead + Send>>>,
    prompt: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl LineOperator {
    pub fn new(input: Box<dyn BufRead + Send>, prompt: Box<dyn Write + Send>) -> Self {
        LineOperator {
            input: Arc::new(Mutex::new(input)),
            prompt: Arc::new(Mutex::new(prompt)),
        }
    }

    /// Standard input and standard error.
    pub fn stdio() -> Self {
        LineOperator::new(
            Box::new(std::io::BufReader::new(std::io::stdin())),
            Box::new(std::io::stderr()),
        )
    }

    fn ask(&self, text: String) -> BoxFuture<'static, Option<String>> {
        let input = self.input.clone();
        let prompt = self.prompt.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                if let Ok(mut p) = prompt.lock() {
                    let _ = write!(p, "{text}");
                    let _ = p.flush();
                }
                let mut line = String::new();
                let mut i = input.lock().ok()?;
                match i.read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line),
                }
            })
            .await
            .ok()
            .flatten()
        }
        .boxed()
    }
}

impl Operator for LineOperator {
    fn confirm(&self, c: &Confirmation) -> BoxFuture<'static, Consent> {
        let (word, skippable) = (c.word.clone(), c.skippable);
        let q = self.ask(if skippable {
            format!(
                "{}\nType \"{}\" to go ahead, \"skip\" to go on without this step (anything else cancels): ",
                c.summary, c.word
            )
        } else {
            format!(
                "{}\nType \"{}\" to go ahead (anything else cancels): ",
                c.summary, c.word
            )
        });
        async move {
            let line = q.await;
            if typed_confirms(line.as_deref(), &word) {
                Consent::Given
            } else if skippable && typed_confirms(line.as_deref(), "skip") {
                Consent::Skipped
            } else {
                Consent::Refused
            }
        }
        .boxed()
    }

    fn decide(&self, step: &str, reason: &str) -> BoxFuture<'static, Decision> {
        let text =
            format!("Step \"{step}\" needs a decision: {reason}\n[c]ontinue, [r]etry or [a]bort? ");
        let asks: Vec<_> = (0..3).map(|_| self.ask(text.clone())).collect();
        async move {
            for a in asks {
                match a.await {
                    None => return Decision::Abort,
                    Some(l) => {
                        if let Some(d) = typed_decision(&l) {
                            return d;
                        }
                    }
                }
            }
            Decision::Abort
        }
        .boxed()
    }
}
