//! Text from device data or user files made safe for a terminal.
//!
//! Zone, op and file names come from kernel ELFs, op logs and CSVs that ttprof does not
//! control. Printed raw, an ESC starts a terminal escape sequence, a NUL or a carriage
//! return hides what came before it, and a right-to-left override reorders the rest of the
//! line. Every text ttprof renders for a person (summaries, diff tables, analyses, errors
//! and issues) goes through [`printable`], which writes each such character as a Rust-style
//! escape (`\u{1b}`) and leaves everything else, line breaks and tabs included, as it is.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal raw: control characters other than line feed and
/// tab, and the Unicode bidirectional formatting characters.
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every control and bidirectional formatting character (but `\n` and `\t`)
/// escaped as `\u{..}`; borrowed when there is none.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn escapes_reach_the_terminal_as_text() {
        assert_eq!(printable("read-tile\tx\n"), "read-tile\tx\n");
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(printable("x\0y\rz\u{7f}"), "x\\u{0}y\\u{d}z\\u{7f}");
        assert_eq!(printable("ab\u{202e}cd"), "ab\\u{202e}cd");
        assert_eq!(printable("\u{9b}31m"), "\\u{9b}31m");
    }
}
