//! A small scanner of Rust source: the paths a file names (its `use` trees and the paths
//! written in code), outside comments, string literals and test-only code.
//!
//! It does not parse Rust; it reads tokens and knows just enough of the grammar for imports:
//! `use` trees (nested groups, `self`, `as`, globs), paths `a::b::c` anywhere in code,
//! attributes (`#[cfg(test)]` items are skipped, `#![cfg(test)]` marks the whole file),
//! and inline `mod name { ... }` blocks (they change what `self` and `super` mean).

/// A token of the little that matters here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    pub(crate) line: u32,
}

/// The tokens of `src`, without comments, literals, lifetimes and numbers.
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut line = 1u32;
    let mut i = 0;
    // Skips a string body starting after its opening quote; `raw` = number of `#`s, or
    // None for an escaped (non-raw) string.
    let skip_string = |mut i: usize, raw: Option<usize>, line: &mut u32| -> usize {
        while i < c.len() {
            match c[i] {
                '\n' => *line += 1,
                '\\' if raw.is_none() => {
                    if at(i + 1) == '\n' {
                        *line += 1;
                    }
                    i += 1;
                }
                '"' => {
                    let hashes = raw.unwrap_or(0);
                    if (1..=hashes).all(|k| at(i + k) == '#') {
                        return i + 1 + hashes;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        i
    };
    // `r"..."`, `r#"..."#`: Some(index after the opening quote, hashes) if one starts at i
    // (at the `r`).
    let raw_start = |i: usize| -> Option<(usize, usize)> {
        if at(i) != 'r' {
            return None;
        }
        let mut k = i + 1;
        while at(k) == '#' {
            k += 1;
        }
        (at(k) == '"').then_some((k + 1, k - i - 1))
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 1;
            i += 2;
            while i < c.len() && depth > 0 {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(i + 1, None, &mut line);
        } else if let Some((body, hashes)) = raw_start(i) {
            i = skip_string(body, Some(hashes), &mut line);
        } else if (ch == 'b' || ch == 'c') && at(i + 1) == '"' {
            i = skip_string(i + 2, None, &mut line);
        } else if (ch == 'b' || ch == 'c') && raw_start(i + 1).is_some() {
            let (body, hashes) = raw_start(i + 1).unwrap();
            i = skip_string(body, Some(hashes), &mut line);
        } else if ch == 'b' && at(i + 1) == '\'' {
            i = skip_char_or_lifetime(&c, i + 1);
        } else if ch == '\'' {
            i = skip_char_or_lifetime(&c, i);
        } else if ch == 'r' && at(i + 1) == '#' && is_ident_start(at(i + 2)) {
            // a raw identifier, r#type
            let start = i + 2;
            i = start;
            while i < c.len() && is_ident_continue(c[i]) {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(c[start..i].iter().collect()),
                line,
            });
        } else if is_ident_start(ch) {
            let start = i;
            while i < c.len() && is_ident_continue(c[i]) {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(c[start..i].iter().collect()),
                line,
            });
        } else if ch.is_ascii_digit() {
            while i < c.len() && is_ident_continue(c[i]) {
                i += 1;
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Token {
                tok: Tok::PathSep,
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                tok: Tok::Punct(ch),
                line,
            });
            i += 1;
        }
    }
    out
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// At a `'`: skips a char literal (`'a'`, `'\n'`, `'\u{1F600}'`, `'{'`) or a lifetime or
/// label (`'a`, `'outer`); returns the index after it.
fn skip_char_or_lifetime(c: &[char], i: usize) -> usize {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    if at(i + 1) == '\\' {
        let mut k = i + 2;
        // the escaped character itself may be a quote: '\''
        k += 1;
        while k < c.len() && c[k] != '\'' && c[k] != '\n' {
            k += 1;
        }
        return k + 1;
    }
    if at(i + 2) == '\'' {
        return i + 3;
    }
    let mut k = i + 1;
    while k < c.len() && is_ident_continue(c[k]) {
        k += 1;
    }
    k
}

/// What a `use` binds in its scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bind {
    /// `use a::b;` binds `b`; `use a::b as c;` binds `c`; `use a::{self}` binds `a`.
    Name(String),
    /// `use a::*;`
    Glob,
    /// `use a::b as _;`
    Nothing,
}

/// One path of a `use` tree, with the group prefixes written out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Use {
    pub(crate) path: Vec<String>,
    pub(crate) bind: Bind,
    pub(crate) line: u32,
    /// The inline modules (`mod a { mod b { .. } }`) the `use` is in, outermost first.
    pub(crate) scope: Vec<String>,
}

/// A path of two or more segments written in code (`crate::a::f(..)`, `super::X`, `m::T`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PathRef {
    pub(crate) path: Vec<String>,
    pub(crate) line: u32,
    pub(crate) scope: Vec<String>,
}

/// What one file names, outside its test-only code.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scan {
    pub(crate) uses: Vec<Use>,
    pub(crate) paths: Vec<PathRef>,
    /// Child modules declared `#[cfg(test)] mod x;` (their files are test code).
    pub(crate) test_mods: Vec<String>,
    /// Inline modules `mod x { .. }` (scope paths), not test-only.
    pub(crate) inline_mods: Vec<Vec<String>>,
    /// Items the file defines at its top level (`struct X`, `fn f`, ...): where a glob
    /// re-export (`pub use m::*`) of this module finds a name.
    pub(crate) items: Vec<String>,
    /// The file starts with `#![cfg(test)]`.
    pub(crate) test_only: bool,
    /// Lines of `#[path = ..]` attributes (not supported: they break the file-to-module map).
    pub(crate) path_attrs: Vec<u32>,
}

/// Scans one file's source.
pub(crate) fn scan(src: &str) -> Scan {
    let toks = tokenize(src);
    let mut s = Scan::default();
    // one entry per open `{`: Some(name) for an inline module's block
    let mut blocks: Vec<Option<String>> = Vec::new();
    let scope =
        |blocks: &[Option<String>]| -> Vec<String> { blocks.iter().flatten().cloned().collect() };
    let ident = |k: usize| -> Option<&str> {
        match toks.get(k).map(|t| &t.tok) {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    };
    let is = |k: usize, t: Tok| toks.get(k).map(|x| &x.tok) == Some(&t);
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].tok {
            Tok::Punct('#') => {
                let inner = is(i + 1, Tok::Punct('!'));
                let open = if inner { i + 2 } else { i + 1 };
                if !is(open, Tok::Punct('[')) {
                    i += 1;
                    continue;
                }
                let close = matching(&toks, open);
                let attr = &toks[open + 1..close.min(toks.len())];
                if is_path_attr(attr) {
                    s.path_attrs.push(toks[i].line);
                }
                i = close + 1;
                if is_cfg_test(attr) {
                    if !inner {
                        i = skip_item(&toks, i, &mut s);
                    } else if blocks.is_empty() {
                        s.test_only = true;
                        return s;
                    } else {
                        // `#![cfg(test)]` inside a block: the rest of the block is test code
                        i = skip_to_block_end(&toks, i);
                    }
                }
            }
            Tok::Ident(kw) if kw == "use" => {
                let line = toks[i].line;
                let mut found = Vec::new();
                i = use_tree(&toks, i + 1, Vec::new(), &mut found);
                for (path, bind) in found {
                    s.uses.push(Use {
                        path,
                        bind,
                        line,
                        scope: scope(&blocks),
                    });
                }
                while i < toks.len() && !is(i, Tok::Punct(';')) {
                    i += 1;
                }
                i += 1;
            }
            Tok::Ident(kw) if kw == "mod" && ident(i + 1).is_some() => {
                let name = ident(i + 1).unwrap().to_string();
                if is(i + 2, Tok::Punct('{')) {
                    let mut inner = scope(&blocks);
                    inner.push(name.clone());
                    s.inline_mods.push(inner);
                    blocks.push(Some(name));
                    i += 3;
                } else {
                    i += 2;
                }
            }
            Tok::Punct('{') => {
                blocks.push(None);
                i += 1;
            }
            Tok::Punct('}') => {
                blocks.pop();
                i += 1;
            }
            Tok::Ident(first) => {
                const ITEMS: &[&str] = &[
                    "struct", "enum", "union", "trait", "type", "fn", "const", "static",
                ];
                if blocks.is_empty() && ITEMS.contains(&first.as_str()) {
                    let at = if ident(i + 1) == Some("mut") {
                        i + 2
                    } else {
                        i + 1
                    };
                    // `const fn f`, `const unsafe fn f`: the later keyword names it
                    match ident(at) {
                        Some(name)
                            if !ITEMS.contains(&name)
                                && !["unsafe", "async", "extern"].contains(&name) =>
                        {
                            s.items.push(name.to_string())
                        }
                        _ => {}
                    }
                }
                let starts_path = i == 0
                    || !matches!(
                        toks[i - 1].tok,
                        Tok::PathSep | Tok::Punct('.') | Tok::Punct('$')
                    )
                    || (is(i - 1, Tok::Punct('$')) && first == "crate");
                let mut path = vec![first.clone()];
                let line = toks[i].line;
                i += 1;
                while is(i, Tok::PathSep) {
                    match ident(i + 1) {
                        Some(seg) => {
                            path.push(seg.to_string());
                            i += 2;
                        }
                        None => break,
                    }
                }
                if starts_path && path.len() >= 2 {
                    s.paths.push(PathRef {
                        path,
                        line,
                        scope: scope(&blocks),
                    });
                }
            }
            _ => i += 1,
        }
    }
    s
}

/// The index of the bracket closing the one at `open` (`[`, `(` or `{`), or `toks.len()`.
fn matching(toks: &[Token], open: usize) -> usize {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Punct('[' | '(' | '{') => depth += 1,
            Tok::Punct(']' | ')' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// Skips to the `}` closing the block the scanner is in (not consuming it).
fn skip_to_block_end(toks: &[Token], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < toks.len() {
        match toks[i].tok {
            Tok::Punct('[' | '(' | '{') => depth += 1,
            Tok::Punct(']' | ')' | '}') => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
            }
            _ => {}
        }
        i += 1;
    }
    i
}

fn words(attr: &[Token]) -> Vec<String> {
    attr.iter()
        .map(|t| match &t.tok {
            Tok::Ident(s) => s.clone(),
            Tok::PathSep => "::".into(),
            Tok::Punct(c) => c.to_string(),
        })
        .collect()
}

fn is_path_attr(attr: &[Token]) -> bool {
    let w = words(attr);
    w.len() >= 2 && w[0] == "path" && w[1] == "="
}

/// `cfg(test)`, or `cfg(all(.., test, ..))`: code compiled only for tests. (`cfg(any(test,
/// feature = ".."))` is not: it is also built outside tests.)
fn is_cfg_test(attr: &[Token]) -> bool {
    let w = words(attr);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    match w.as_slice() {
        ["cfg", "(", "test", ")"] => true,
        ["cfg", "(", "all", "(", rest @ ..] => {
            // `test` as a whole argument of the all(..), at its top level
            let mut depth = 0;
            let mut prev = "(";
            for (k, t) in rest.iter().enumerate() {
                match *t {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    "test" if depth == 0 && (prev == "(" || prev == ",") => {
                        let next = rest.get(k + 1).copied().unwrap_or(")");
                        if next == "," || next == ")" {
                            return true;
                        }
                    }
                    _ => {}
                }
                if depth < 0 {
                    break;
                }
                prev = t;
            }
            false
        }
        _ => false,
    }
}

/// Skips the item (or statement, field, match arm) after a `#[cfg(test)]` attribute and
/// returns the index after it. Notes `#[cfg(test)] mod x;` in `s.test_mods`.
fn skip_item(toks: &[Token], mut i: usize, s: &mut Scan) -> usize {
    // further attributes of the same item
    while i < toks.len() && toks[i].tok == Tok::Punct('#') {
        let open = if toks.get(i + 1).map(|t| &t.tok) == Some(&Tok::Punct('[')) {
            i + 1
        } else {
            break;
        };
        i = matching(toks, open) + 1;
    }
    let word = |k: usize| match toks.get(k).map(|t| &t.tok) {
        Some(Tok::Ident(s)) => s.as_str(),
        _ => "",
    };
    // past the visibility
    let mut k = i;
    if word(k) == "pub" {
        k += 1;
        if toks.get(k).map(|t| &t.tok) == Some(&Tok::Punct('(')) {
            k = matching(toks, k) + 1;
        }
    }
    const ITEMS: &[&str] = &[
        "fn",
        "mod",
        "impl",
        "struct",
        "enum",
        "union",
        "trait",
        "use",
        "const",
        "static",
        "type",
        "macro_rules",
        "extern",
        "unsafe",
        "async",
    ];
    let item = ITEMS.contains(&word(k));
    if word(k) == "mod" && toks.get(k + 2).map(|t| &t.tok) == Some(&Tok::Punct(';')) {
        s.test_mods.push(word(k + 1).to_string());
        return k + 3;
    }
    let mut depth = 0i32;
    while i < toks.len() {
        match toks[i].tok {
            Tok::Punct('[' | '(' | '{') => depth += 1,
            Tok::Punct(c @ (']' | ')' | '}')) => {
                if depth == 0 {
                    return i; // the end of the enclosing block: not ours
                }
                depth -= 1;
                if depth == 0 && c == '}' {
                    return i + 1;
                }
            }
            Tok::Punct(';') if depth == 0 => return i + 1,
            Tok::Punct(',') if depth == 0 && !item => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Parses a use tree at `i` (after `use`, or inside a group) with the group's `prefix`;
/// pushes (path, binding) pairs and returns the index after the tree.
fn use_tree(
    toks: &[Token],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Bind)>,
) -> usize {
    let mut path = prefix;
    let tok = |k: usize| toks.get(k).map(|t| &t.tok);
    if tok(i) == Some(&Tok::PathSep) {
        // `use ::name::..`: always an external crate
        path.push("::".into());
        i += 1;
    }
    loop {
        match tok(i) {
            Some(Tok::Ident(seg)) if seg != "as" || path.is_empty() => {
                path.push(seg.clone());
                i += 1;
                if tok(i) == Some(&Tok::PathSep) {
                    i += 1;
                    continue;
                }
                break;
            }
            Some(Tok::Punct('*')) => {
                out.push((path, Bind::Glob));
                return i + 1;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                loop {
                    match tok(i) {
                        None => return i,
                        Some(Tok::Punct('}')) => return i + 1,
                        Some(Tok::Punct(',')) => i += 1,
                        _ => {
                            let before = i;
                            i = use_tree(toks, i, path.clone(), out);
                            if i == before {
                                i += 1; // not a tree: step over it
                            }
                        }
                    }
                }
            }
            _ => return i,
        }
    }
    if path.last().map(String::as_str) == Some("self") {
        path.pop();
    }
    let mut bind = match path.last() {
        Some(last) => Bind::Name(last.clone()),
        None => Bind::Nothing,
    };
    if tok(i) == Some(&Tok::Ident("as".into())) {
        if let Some(Tok::Ident(alias)) = tok(i + 1) {
            bind = if alias == "_" {
                Bind::Nothing
            } else {
                Bind::Name(alias.clone())
            };
            i += 2;
        }
    }
    out.push((path, bind));
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uses(src: &str) -> Vec<(String, Bind)> {
        scan(src)
            .uses
            .into_iter()
            .map(|u| (u.path.join("::"), u.bind))
            .collect()
    }

    fn paths(src: &str) -> Vec<String> {
        scan(src)
            .paths
            .into_iter()
            .map(|p| p.path.join("::"))
            .collect()
    }

    fn name(s: &str) -> Bind {
        Bind::Name(s.into())
    }

    #[test]
    fn nested_use_groups() {
        let got = uses("pub(crate) use crate::a::b::{c, d::{e as f, self}, g::*, self as h};");
        assert_eq!(
            got,
            vec![
                ("crate::a::b::c".into(), name("c")),
                ("crate::a::b::d::e".into(), name("f")),
                ("crate::a::b::d".into(), name("d")),
                ("crate::a::b::g".into(), Bind::Glob),
                ("crate::a::b".into(), name("h")),
            ]
        );
        assert_eq!(
            uses("use super::super::x as _;"),
            vec![("super::super::x".into(), Bind::Nothing)]
        );
        assert_eq!(uses("use self::m::{};"), vec![]);
        assert_eq!(
            uses("use ::std::fmt;"),
            vec![("::::std::fmt".into(), name("fmt"))]
        );
        assert_eq!(
            uses("use {a::b, c};"),
            vec![("a::b".into(), name("b")), ("c".into(), name("c"))]
        );
    }

    #[test]
    fn inline_paths_outside_comments_and_strings() {
        let src = r####"
            // crate::line::comment
            /* crate::block /* nested crate::nested */ still::comment */
            //! crate::inner::doc
            /// crate::outer::doc
            fn f() {
                let s = "crate::in_string \" crate::escaped";
                let r = r#"crate::raw "quoted" crate::raw2"#;
                let b = br##"crate::raw_bytes"##;
                let c = '"'; let d = '\''; let l: &'static str = "";
                crate::real::call(x.method::<T>(), super::up::Thing, self::down::f);
                <T as crate::tr::Trait>::g();
                $crate::from_macro::m!();
            }
        "####;
        assert_eq!(
            paths(src),
            vec![
                "crate::real::call",
                "super::up::Thing",
                "self::down::f",
                "crate::tr::Trait",
                "crate::from_macro::m",
            ]
        );
    }

    #[test]
    fn test_code_is_skipped() {
        let src = r#"
            use crate::kept::A;
            #[cfg(test)]
            use crate::test_use::B;
            #[cfg(test)]
            mod tests {
                use crate::in_tests::C;
                fn g() { crate::in_tests::f(); }
            }
            #[cfg(test)]
            mod more_tests;
            struct S {
                #[cfg(test)]
                field: crate::test_field::T,
                other: crate::kept_field::U,
            }
            #[cfg(all(test, feature = "x"))]
            fn h() { crate::all_test::f() }
            #[cfg(any(test, feature = "testing"))]
            fn k() { crate::any_test::f() }
        "#;
        let s = scan(src);
        assert_eq!(uses(src), vec![("crate::kept::A".into(), name("A"))]);
        assert_eq!(
            paths(src),
            vec!["crate::kept_field::U", "crate::any_test::f"]
        );
        assert_eq!(s.test_mods, vec!["more_tests"]);
        assert!(scan("//! doc\n#![cfg(test)]\nuse crate::x::y;").test_only);
    }

    #[test]
    fn inline_modules_and_lines() {
        let src = "mod a {\n    mod b {\n        use super::x::Y;\n    }\n}\nuse self::z::W;\n#[path = \"q.rs\"]\nmod q;";
        let s = scan(src);
        assert_eq!(
            s.inline_mods,
            vec![vec!["a".to_string()], vec!["a".into(), "b".into()]]
        );
        assert_eq!(s.uses[0].scope, vec!["a", "b"]);
        assert_eq!(s.uses[0].line, 3);
        assert!(s.uses[1].scope.is_empty());
        assert_eq!(s.uses[1].line, 6);
        assert_eq!(s.path_attrs, vec![7]);
        let items = scan("pub struct A;\nfn f() { fn inner() {} }\nimpl A { const C: u8 = 0; }\nconst fn g() {}\nstatic mut M: u8 = 0;\n").items;
        assert_eq!(items, vec!["A", "f", "g", "M"]);
    }
}
