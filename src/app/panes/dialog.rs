//! Dialogs over the console, one at a time and ahead of every other key: a typed confirmation
//! (the answer is yes only when the exact word is typed), a choice, or a small form. What the
//! dialog is for decides what its answer does (`update` acts on it).

use super::text::{self, Caret};
use crate::app::workers::operator::Reply;
use crate::runbook::model::Runbook;

/// Longest text typed into one field.
pub const FIELD_MAX: usize = 500;

/// What a dialog's answer is for.
#[derive(Debug, Clone, PartialEq)]
pub enum Purpose {
    /// Start a run of this runbook (the word is its name).
    StartRun(Box<Runbook>),
    /// The executor's confirmation (a step id, `batch N`, `done` for manual steps).
    Confirm {
        run_id: String,
        reply: Reply,
        /// The runbook lets the run go on without this step.
        skippable: bool,
    },
    /// The executor's decision after a failure.
    Decide {
        run_id: String,
        reply: Reply,
    },
    /// Esc on the executor's confirmation: ask again (`question`, reopened) or abort.
    Declined {
        run_id: String,
        reply: Reply,
        question: Box<Dialog>,
    },
    /// Abort this run (asked first: the choice says what is done and not).
    AbortRun {
        run_id: String,
    },
    /// Hold or let go on this run.
    ControlRun {
        run_id: String,
        control: crate::runbook::executor::Control,
    },
    /// Resume this run of this runbook; each choice is where it continues (`None`: not now).
    Resume {
        runbook: Box<Runbook>,
        run_id: String,
        from: Vec<Option<usize>>,
    },
    Status,
    Severity,
    ActionItem,
    Impact {
        start: bool,
    },
    Correction,
    /// Declare the incident (a title and a severity).
    Declare,
    /// Publish the postmortem (the choice is the form).
    Publish,
    /// The followed holder went away: take the incident over, or keep watching.
    TakeOver,
    /// A responder's proposal (record `seq`, by `proposer`): accepted or declined.
    Proposal {
        proposer: String,
        seq: u64,
        what: crate::app::sharing::Proposed,
    },
    /// A run was refused: `by` holds the executor lease; propose the run of `runbook` to them.
    ProposeToLeaseHolder {
        by: String,
        runbook: String,
    },
    /// Which dashboard variable to set (the choice is its index).
    PickVariable,
    /// The value of variable `index`: the choice is one of `choices`.
    SetVariable {
        index: usize,
        choices: Vec<super::variables::Choice>,
    },
    /// Which of these firing alerts to silence (issue 35).
    SilencePick(Vec<crate::alerts::board::AlertKey>),
    /// The silence form: a field per matcher, then how long and the note.
    SilenceForm,
    /// The matchers select more than what fires here: the typed word makes it anyway.
    SilenceBroad(Box<crate::alerts::silence::SilenceSpec>),
    /// A silence lapses soon: extend it, or let it lapse.
    SilenceLapsing(Box<crate::incident::event::SilenceRecord>),
    /// The incident is resolved: expire its silences still in force, or keep them.
    SilenceExpire(Vec<crate::incident::event::SilenceRecord>),
    /// What `y` copies: (what it is, the text), one option each.
    Copy(Vec<(String, String)>),
    /// The command palette (`:`): its one field is the command.
    Palette,
}

/// One field of a form.
#[derive(Clone, PartialEq)]
pub struct Field {
    pub label: String,
    pub value: String,
    /// What goes here, shown after the label.
    pub hint: String,
    /// Where typing happens (a prefilled value starts selected: typing replaces it).
    pub caret: Caret,
    /// A secret typed for one run: drawn as dots, never printed by `Debug`, never recorded.
    pub masked: bool,
}

impl Field {
    pub fn new(
        label: impl Into<String>,
        hint: impl Into<String>,
        value: impl Into<String>,
    ) -> Field {
        let value = value.into();
        Field {
            label: label.into(),
            hint: hint.into(),
            caret: Caret::prefilled(&value),
            value,
            masked: false,
        }
    }

    /// An empty field for a secret: what is typed shows as dots.
    pub fn secret(label: impl Into<String>, hint: impl Into<String>) -> Field {
        Field {
            masked: true,
            ..Field::new(label, hint, "")
        }
    }
}

/// A masked field's value prints as the mask, so a dialog in a log line or a failed test's
/// output never shows a secret typed into it.
impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = match self.masked {
            true => crate::secret::MASK,
            false => self.value.as_str(),
        };
        (f.debug_struct("Field"))
            .field("label", &self.label)
            .field("value", &value)
            .field("hint", &self.hint)
            .field("caret", &self.caret)
            .field("masked", &self.masked)
            .finish()
    }
}

/// The body of a dialog.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// Type `word` exactly.
    Type {
        word: String,
        typed: String,
        caret: Caret,
    },
    Choose {
        options: Vec<String>,
        /// `None`: nothing highlighted yet (a decision), so Enter cannot answer by accident.
        selected: Option<usize>,
        /// Which options are checked, where several may be (space checks; enter takes the
        /// checked ones); empty for a choice of one.
        checked: Vec<bool>,
    },
    Form {
        fields: Vec<Field>,
        focus: usize,
    },
}

/// A dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct Dialog {
    pub title: String,
    /// What the operator should know before answering (plan lines, the failure).
    pub text: Vec<String>,
    pub body: Body,
    pub purpose: Purpose,
    /// Why the last answer was not accepted.
    pub error: Option<String>,
}

impl Dialog {
    /// A typed confirmation of `word`.
    pub fn typed(title: String, text: Vec<String>, word: String, purpose: Purpose) -> Dialog {
        Dialog {
            title,
            text,
            body: Body::Type {
                word,
                typed: String::new(),
                caret: Caret::END,
            },
            purpose,
            error: None,
        }
    }

    pub fn choose(
        title: String,
        text: Vec<String>,
        options: Vec<String>,
        selected: usize,
        purpose: Purpose,
    ) -> Dialog {
        Dialog {
            title,
            text,
            body: Body::Choose {
                options,
                selected: Some(selected),
                checked: Vec::new(),
            },
            purpose,
            error: None,
        }
    }

    /// A choice of several: `checked` says which options start checked.
    pub fn check(
        title: String,
        text: Vec<String>,
        options: Vec<String>,
        checked: Vec<bool>,
        purpose: Purpose,
    ) -> Dialog {
        let selected = checked.iter().position(|c| *c).unwrap_or(0);
        let mut d = Dialog::choose(title, text, options, selected, purpose);
        if let Body::Choose { checked: c, .. } = &mut d.body {
            *c = checked;
        }
        d
    }

    pub fn form(title: String, text: Vec<String>, fields: Vec<Field>, purpose: Purpose) -> Dialog {
        Dialog {
            title,
            text,
            body: Body::Form { fields, focus: 0 },
            purpose,
            error: None,
        }
    }

    /// A key that is not bound in dialogs: text for the field being typed (with the editing
    /// keys of [`text::edit`]), or j/k moving through a choice.
    pub fn edit(&mut self, ev: &crossterm::event::KeyEvent) -> bool {
        use crossterm::event::{KeyCode, KeyModifiers};
        let (target, caret) = match &mut self.body {
            Body::Type { typed, caret, .. } => (typed, caret),
            Body::Form { fields, focus } => match fields.get_mut(*focus) {
                Some(f) => (&mut f.value, &mut f.caret),
                None => return false,
            },
            Body::Choose { .. } => {
                let plain = !ev
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
                match ev.code {
                    KeyCode::Char('j') if plain => self.step(true),
                    KeyCode::Char('k') if plain => self.step(false),
                    _ => return false,
                }
                return true;
            }
        };
        if !text::edit(target, caret, ev, FIELD_MAX) {
            return false;
        }
        self.error = None;
        true
    }

    /// Move to the next (`forward`) or previous field or choice; from no choice highlighted,
    /// to the first or the last.
    pub fn step(&mut self, forward: bool) {
        let next = |pos: usize, n: usize| {
            if forward {
                (pos + 1) % n
            } else {
                (pos + n - 1) % n
            }
        };
        match &mut self.body {
            Body::Choose {
                options, selected, ..
            } if !options.is_empty() => {
                let n = options.len();
                *selected = Some(match *selected {
                    Some(pos) => next(pos, n),
                    None if forward => 0,
                    None => n - 1,
                });
                self.error = None;
            }
            Body::Form { fields, focus } if !fields.is_empty() => {
                *focus = next(*focus, fields.len());
            }
            _ => {}
        }
    }

    /// Nothing highlighted: the answer must be chosen with a key before Enter takes it.
    pub fn unselected(mut self) -> Dialog {
        if let Body::Choose { selected, .. } = &mut self.body {
            *selected = None;
        }
        self
    }

    /// The value of form field `i` (trimmed), or "".
    pub fn field(&self, i: usize) -> &str {
        match &self.body {
            Body::Form { fields, .. } => fields.get(i).map_or("", |f| f.value.trim()),
            _ => "",
        }
    }

    /// The selected choice, if a choice.
    pub fn selected(&self) -> Option<usize> {
        match &self.body {
            Body::Choose { selected, .. } => *selected,
            _ => None,
        }
    }

    /// The checked options of a choice of several (`None`: not one).
    pub fn checked(&self) -> Option<Vec<usize>> {
        match &self.body {
            Body::Choose { checked, .. } if !checked.is_empty() => Some(
                (checked.iter().enumerate())
                    .filter_map(|(i, c)| c.then_some(i))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Check or uncheck option `i` of a choice of several.
    pub fn set_checked(&mut self, i: usize, on: bool) {
        if let Body::Choose { checked, .. } = &mut self.body
            && let Some(c) = checked.get_mut(i)
        {
            *c = on;
            self.error = None;
        }
    }

    /// Whether the typed word matches exactly.
    pub fn typed_matches(&self) -> bool {
        match &self.body {
            Body::Type { word, typed, .. } => {
                crate::runbook::operator::typed_confirms(Some(typed), word)
            }
            _ => false,
        }
    }
}
