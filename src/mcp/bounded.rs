//! Every answer is bounded and clean: a page of at most [`MAX_PAGE`] items and [`MAX_BYTES`]
//! of JSON, saying when it was cut and where the next page starts; every string stripped of
//! control characters ([`crate::sanitize`]) and of anything shaped like a secret
//! ([`crate::secret::mask_patterns`]) on the way out, whatever tool made it.

use serde::Serialize;
use serde_json::Value;

/// The most bytes of JSON one answer carries.
pub const MAX_BYTES: usize = 48 * 1024;
/// Items in a page unless the caller asks for fewer.
pub const PAGE: usize = 50;
/// The most items a page holds, whatever the caller asks.
pub const MAX_PAGE: usize = 200;

/// A page of a list.
#[derive(Debug, Serialize)]
pub struct Page<T: Serialize> {
    pub items: Vec<T>,
    /// True when items were left out (by the page size or the byte cap).
    pub cut: bool,
    /// What to pass to get the next page (`since` for the timeline, `offset` elsewhere).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<u64>,
}

/// A slice of a long text.
#[derive(Debug, Serialize)]
pub struct TextPage {
    pub text: String,
    pub offset: usize,
    pub total_bytes: usize,
    /// True when the text goes on past this slice.
    pub cut: bool,
    /// Pass this as `offset` for the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// The page size asked for, within 1..=[`MAX_PAGE`].
pub fn page_size(asked: Option<usize>) -> usize {
    asked.unwrap_or(PAGE).clamp(1, MAX_PAGE)
}

/// `items` as one page of at most `size`, dropped from the end until its JSON fits in
/// [`MAX_BYTES`] (at least one item is kept when it fits alone). `next_of` says where the
/// page after the last item kept starts.
pub fn page<T: Serialize>(mut items: Vec<T>, size: usize, next_of: impl Fn(&T) -> u64) -> Page<T> {
    let mut cut = items.len() > size;
    items.truncate(size);
    let mut sizes: Vec<usize> = (items.iter())
        .map(|i| serde_json::to_vec(i).map_or(0, |v| v.len() + 1))
        .collect();
    // Room for the envelope: `{"items":[…],"cut":…,"next":…}`.
    while sizes.iter().sum::<usize>() + 64 > MAX_BYTES && !items.is_empty() {
        items.pop();
        sizes.pop();
        cut = true;
    }
    let next = if cut { items.last().map(next_of) } else { None };
    Page { items, cut, next }
}

/// The part of `text` from byte `offset` that fits in [`MAX_BYTES`] (cut at a character
/// boundary).
pub fn text_page(text: &str, offset: usize) -> TextPage {
    let floor = |mut i: usize| {
        i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = floor(offset);
    let end = floor(start.saturating_add(MAX_BYTES - 256));
    TextPage {
        text: text[start..end].to_string(),
        offset: start,
        total_bytes: text.len(),
        cut: end < text.len(),
        next_offset: (end < text.len()).then_some(end),
    }
}

/// `value` as JSON text, every string in it cleaned (see the module).
pub fn clean_json<T: Serialize>(value: &T) -> String {
    let value = serde_json::to_value(value).unwrap_or(Value::Null);
    serde_json::to_string_pretty(&clean(value)).unwrap_or_default()
}

fn clean(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(clean_text(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(clean).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (clean_text(&k), clean(v)))
                .collect(),
        ),
        other => other,
    }
}

/// Control characters stripped (newlines kept) and secret-shaped words masked.
pub fn clean_text(s: &str) -> String {
    crate::secret::mask_patterns(&crate::sanitize::multiline(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_cut_by_count_and_bytes_and_say_where_to_go_on() {
        let p = page((1..=10u64).collect(), 3, |n| *n);
        assert_eq!((p.items.len(), p.cut, p.next), (3, true, Some(3)));
        let big: Vec<String> = (0..100).map(|_| "x".repeat(4096)).collect();
        let p = page(big, MAX_PAGE, |_| 0);
        assert!(p.cut && p.items.len() < 12 && !p.items.is_empty());
        assert!(clean_json(&p).len() <= MAX_BYTES + 1024);
        let all = page(vec![1u64, 2], 50, |n| *n);
        assert_eq!((all.cut, all.next), (false, None));
    }

    #[test]
    fn text_is_sliced_on_character_boundaries_and_cleaned() {
        let text = "é".repeat(MAX_BYTES);
        let first = text_page(&text, 0);
        assert!(first.cut && first.text.len() < MAX_BYTES);
        let rest = text_page(&text, first.next_offset.unwrap());
        assert_eq!(rest.offset, first.text.len());
        let dirty = clean_json(&serde_json::json!({"n": "a\u{1b}[2Jb password=hunter2"}));
        assert!(
            !dirty.contains('\u{1b}') && !dirty.contains("hunter2"),
            "{dirty}"
        );
    }
}
