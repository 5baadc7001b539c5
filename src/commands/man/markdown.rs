//! The man page's reference sections are written once, in Markdown (`runbooks/README.md` is one
//! of them, read on GitHub as well), and rendered here to roff: headings become `.SS`,
//! paragraphs `.PP`, code blocks no-fill blocks, list items and table rows tagged paragraphs.
//! The first-level heading is left out: the page names the section itself.

use clap_mangen::roff::{Inline, Roff, bold, italic, roman};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// One man-page section (`.SH NAME`) from a Markdown document.
pub fn section(name: &str, markdown: &str) -> String {
    let mut r = Roff::new();
    r.control("SH", [name]);
    let mut w = Writer::default();
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        w.event(&mut r, event);
    }
    r.to_roff()
}

/// What is being read: the inline runs of the current block, and where they go.
#[derive(Default)]
struct Writer {
    line: Vec<Inline>,
    /// Inside `**…**` or `` `…` `` (bold), `*…*` (italic).
    bold: usize,
    italic: usize,
    /// Inside a first-level heading, whose text is dropped.
    skipping: bool,
    /// Inside a fenced or indented code block.
    code: Option<String>,
    /// The cells of the table row being read, each a run of inlines.
    cells: Vec<Vec<Inline>>,
    /// The header row's words, which name the third and later cells of a row.
    head: Vec<String>,
    /// Inside a list item, whose paragraphs stay in the item.
    in_item: bool,
}

impl Writer {
    fn event(&mut self, r: &mut Roff, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(r, &tag),
            Event::End(tag) => self.end(r, tag),
            Event::Text(t) if self.code.is_some() => {
                self.code.get_or_insert_with(String::new).push_str(&t);
            }
            Event::Text(t) => self.push(&t),
            Event::Code(t) => self.line.push(bold(t.to_string())),
            Event::SoftBreak => self.push(" "),
            Event::HardBreak => self.flush(r),
            // HTML (the README's key-table markers), rules, footnotes: nothing in a man page.
            _ => {}
        }
    }

    fn start(&mut self, r: &mut Roff, tag: &Tag<'_>) {
        match tag {
            Tag::Heading { level, .. } => {
                self.flush(r);
                self.skipping = *level == HeadingLevel::H1;
            }
            Tag::Paragraph => self.flush(r),
            Tag::CodeBlock(_) => {
                self.flush(r);
                self.code = Some(String::new());
            }
            Tag::Item => {
                self.flush(r);
                r.control("IP", ["\\(bu", "2"]);
                self.in_item = true;
            }
            Tag::Strong => self.bold += 1,
            Tag::Emphasis => self.italic += 1,
            Tag::TableRow => self.cells.clear(),
            Tag::TableCell => self.line.clear(),
            _ => {}
        }
    }

    fn end(&mut self, r: &mut Roff, tag: TagEnd) {
        match tag {
            TagEnd::Heading(level) => {
                let text = self.take_text();
                if level != HeadingLevel::H1 {
                    r.control("SS", [text.as_str()]);
                }
                self.skipping = false;
            }
            TagEnd::Paragraph if !self.line.is_empty() && !self.in_item => {
                r.control("PP", []);
                self.flush(r);
            }
            TagEnd::Item => {
                self.flush(r);
                self.in_item = false;
            }
            TagEnd::CodeBlock => {
                let text = self.code.take().unwrap_or_default();
                r.control("PP", []);
                r.control("RS", ["4"]);
                r.control("nf", []);
                r.text([roman(text.trim_end())]);
                r.control("fi", []);
                r.control("RE", []);
            }
            TagEnd::Strong => self.bold = self.bold.saturating_sub(1),
            TagEnd::Emphasis => self.italic = self.italic.saturating_sub(1),
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.line);
                self.cells.push(cell);
            }
            TagEnd::TableHead => {
                self.head = std::mem::take(&mut self.cells)
                    .into_iter()
                    .map(|cell| {
                        self.line = cell;
                        self.take_text()
                    })
                    .collect();
            }
            TagEnd::TableRow => self.row(r),
            _ => {}
        }
    }

    /// A table row: the first cell as the tag, the second after it, then each later one named
    /// by its header ("; gates read: …").
    fn row(&mut self, r: &mut Roff) {
        let mut cells = std::mem::take(&mut self.cells).into_iter();
        let Some(first) = cells.next() else { return };
        r.control("TP", []);
        r.text(first);
        let mut rest = Vec::new();
        for (i, cell) in cells.enumerate() {
            if i > 0 {
                let name = self.head.get(i + 1).map_or("", String::as_str);
                rest.push(roman(format!("; {name}: ")));
            }
            rest.extend(cell);
        }
        if !rest.is_empty() {
            r.text(rest);
        }
    }

    fn push(&mut self, text: &str) {
        if self.skipping {
            return;
        }
        let text = text.to_string();
        self.line.push(if self.bold > 0 {
            bold(text)
        } else if self.italic > 0 {
            italic(text)
        } else {
            roman(text)
        });
    }

    /// The heading's words, whatever their style.
    fn take_text(&mut self) -> String {
        let mut s = String::new();
        for inline in std::mem::take(&mut self.line) {
            if let Inline::Roman(t) | Inline::Bold(t) | Inline::Italic(t) = inline {
                s.push_str(&t);
            }
        }
        s
    }

    fn flush(&mut self, r: &mut Roff) {
        if !self.line.is_empty() {
            r.text(std::mem::take(&mut self.line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_roff_without_markup_left() {
        let md = "# Title dropped\n\nA **bold** word, `code` and *this*.\n\n## Sub\n\n\
                  - one\n- two\n\n| a | b | c |\n|---|---|---|\n| `x` | y | z |\n\n\
                  ```sh\n.dot at line start\nwarroom -x\n```\n";
        let roff = section("RUNBOOKS", md);
        assert!(roff.starts_with(".SH RUNBOOKS\n"), "{roff}");
        assert!(!roff.contains("Title dropped"), "{roff}");
        assert!(roff.contains("\\fBbold\\fR"), "{roff}");
        assert!(roff.contains("\\fBcode\\fR"), "{roff}");
        assert!(roff.contains("\\fIthis\\fR"), "{roff}");
        assert!(roff.contains(".SS Sub\n"), "{roff}");
        assert_eq!(roff.matches(".IP \\(bu 2").count(), 2, "{roff}");
        // The header row names the third cell on; a body row is a tagged paragraph.
        assert!(roff.contains(".TP\n\\fBx\\fR\ny; c: z\n"), "{roff}");
        assert!(!roff.contains("\na; b"), "{roff}");
        // Code stays as written, a leading dot escaped, dashes as roff writes them.
        assert!(
            roff.contains(".nf\n\\&.dot at line start\nwarroom \\-x\n.fi"),
            "{roff}"
        );
        for markup in ["**", "`", "|---"] {
            assert!(!roff.contains(markup), "{markup} left in {roff}");
        }
    }
}
