//! Editing one line of text, the same in every field (a note, a dialog's field, a search):
//! characters insert at the caret, Backspace and Delete remove one, Ctrl-U clears to the start,
//! Ctrl-W removes the word before the caret, Home/End and Left/Right move. A prefilled value
//! starts selected, so typing replaces it and any movement keeps it.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// Where typing happens in a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caret {
    /// In characters from the start; past the end means the end.
    pub at: usize,
    /// The whole value is selected: the next character replaces it.
    pub selected: bool,
}

impl Default for Caret {
    fn default() -> Self {
        Caret::END
    }
}

impl Caret {
    /// At the end, nothing selected.
    pub const END: Caret = Caret {
        at: usize::MAX,
        selected: false,
    };

    /// For a value given beforehand: at its end, selected when there is one.
    pub fn prefilled(value: &str) -> Caret {
        Caret {
            at: usize::MAX,
            selected: !value.is_empty(),
        }
    }

    /// The caret's index in `value`, in characters.
    pub fn index(&self, value: &str) -> usize {
        self.at.min(value.chars().count())
    }

    /// `value` split at the caret, for drawing.
    pub fn split<'a>(&self, value: &'a str) -> (&'a str, &'a str) {
        value.split_at(byte(value, self.index(value)))
    }
}

fn byte(s: &str, chars: usize) -> usize {
    s.char_indices().nth(chars).map_or(s.len(), |(b, _)| b)
}

/// Apply one key to `value`; false when the key is not an editing key (the caller may use it).
/// `max` bounds the length in characters.
pub fn edit(value: &mut String, caret: &mut Caret, ev: &KeyEvent, max: usize) -> bool {
    if ev.kind == KeyEventKind::Release {
        return false;
    }
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    let alt = ev.modifiers.contains(KeyModifiers::ALT);
    let mut at = caret.index(value);
    let replace = std::mem::replace(&mut caret.selected, false);
    match ev.code {
        KeyCode::Char('u') if ctrl => {
            value.replace_range(..byte(value, at), "");
            at = 0;
        }
        KeyCode::Char('w') if ctrl => {
            let chars: Vec<char> = value.chars().collect();
            let mut from = at;
            while from > 0 && chars[from - 1].is_whitespace() {
                from -= 1;
            }
            while from > 0 && !chars[from - 1].is_whitespace() {
                from -= 1;
            }
            value.replace_range(byte(value, from)..byte(value, at), "");
            at = from;
        }
        KeyCode::Char(c) if !ctrl && !alt && !c.is_control() => {
            if replace {
                value.clear();
                at = 0;
            }
            if value.chars().count() < max {
                value.insert(byte(value, at), c);
                at += 1;
            }
        }
        KeyCode::Backspace if replace => {
            value.clear();
            at = 0;
        }
        KeyCode::Backspace => {
            if at > 0 {
                value.replace_range(byte(value, at - 1)..byte(value, at), "");
                at -= 1;
            }
        }
        KeyCode::Delete if replace => {
            value.clear();
            at = 0;
        }
        KeyCode::Delete => {
            if at < value.chars().count() {
                value.replace_range(byte(value, at)..byte(value, at + 1), "");
            }
        }
        KeyCode::Home => at = 0,
        KeyCode::End => at = usize::MAX,
        KeyCode::Left => at = at.saturating_sub(1),
        KeyCode::Right => at += 1,
        _ => {
            caret.selected = replace;
            return false;
        }
    }
    caret.at = at;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }
    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }
    fn typed(v: &mut String, c: &mut Caret, s: &str) {
        for ch in s.chars() {
            assert!(edit(v, c, &k(KeyCode::Char(ch)), 100));
        }
    }

    #[test]
    fn the_editing_keys_do_what_a_shell_does() {
        let (mut v, mut c) = (String::new(), Caret::END);
        typed(&mut v, &mut c, "roll back the deploy");
        edit(&mut v, &mut c, &ctrl('w'), 100);
        assert_eq!(v, "roll back the ");
        edit(&mut v, &mut c, &ctrl('w'), 100);
        assert_eq!(v, "roll back ");
        edit(&mut v, &mut c, &k(KeyCode::Home), 100);
        typed(&mut v, &mut c, "é ");
        assert_eq!(v, "é roll back ");
        edit(&mut v, &mut c, &k(KeyCode::End), 100);
        typed(&mut v, &mut c, "now");
        assert_eq!(v, "é roll back now");
        for _ in 0..3 {
            edit(&mut v, &mut c, &k(KeyCode::Left), 100);
        }
        edit(&mut v, &mut c, &ctrl('u'), 100);
        assert_eq!(v, "now");
        assert_eq!(c.index(&v), 0);
        edit(&mut v, &mut c, &k(KeyCode::Delete), 100);
        assert_eq!(v, "ow");
        edit(&mut v, &mut c, &k(KeyCode::End), 100);
        edit(&mut v, &mut c, &k(KeyCode::Backspace), 100);
        assert_eq!(v, "o");
        assert!(!edit(&mut v, &mut c, &k(KeyCode::Enter), 100));
        assert!(!edit(&mut v, &mut c, &ctrl('x'), 100));
    }

    #[test]
    fn a_prefilled_value_is_replaced_by_typing_and_kept_by_moving() {
        let mut v = "2026-07-17 08:30:00".to_string();
        let mut c = Caret::prefilled(&v);
        typed(&mut v, &mut c, "07:05");
        assert_eq!(v, "07:05");
        let mut v = "42".to_string();
        let mut c = Caret::prefilled(&v);
        edit(&mut v, &mut c, &k(KeyCode::End), 100);
        typed(&mut v, &mut c, "1");
        assert_eq!(v, "421");
        let mut v = "42".to_string();
        let mut c = Caret::prefilled(&v);
        edit(&mut v, &mut c, &k(KeyCode::Backspace), 100);
        assert_eq!(v, "");
        // An unrelated key leaves the selection as it was.
        let mut v = "42".to_string();
        let mut c = Caret::prefilled(&v);
        assert!(!edit(&mut v, &mut c, &k(KeyCode::Tab), 100));
        assert!(c.selected);
    }

    #[test]
    fn the_length_is_bounded() {
        let (mut v, mut c) = (String::new(), Caret::END);
        for _ in 0..10 {
            edit(&mut v, &mut c, &k(KeyCode::Char('x')), 4);
        }
        assert_eq!(v, "xxxx");
    }
}
