//! The layers of ttprof's crates, checked: no import goes up a layer unless it is listed,
//! and no import cycle joins two units unless it is listed.
//!
//! Each checked crate has a table, `tests/layers/<crate>.txt` (format: in `src/table.rs`),
//! read when the test runs: editing a table needs no rebuild. This crate depends on nothing,
//! so the check builds in seconds and does not wait for the crates it reads.
//!
//! What counts as an import of module `a` by module `b`: a `use` of a path into `a`
//! (`crate::`, `super::`, `self::`, a child module, or a name an earlier `use` bound), or
//! such a path written in code, outside comments, strings and test-only code
//! (`#[cfg(test)]` items, `#![cfg(test)]` files, the files of `#[cfg(test)] mod x;`, and
//! modules named `tests`). A path resolves to the longest prefix that is a module file;
//! a name that file re-exports (`pub use`) is followed to where it comes from.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod scan;
mod table;

use scan::{Bind, Scan};
use table::{within, Table};

/// What a check found: a readable report (always), and what fails the test.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The layers, and what the table allows (imports that go up, cycles, knots).
    pub report: String,
    /// Each problem, with what to do about it; empty when the crate keeps its layers.
    pub failures: Vec<String>,
}

type ModPath = Vec<String>;

struct SourceFile {
    /// From the workspace root, for messages.
    shown: String,
    module: ModPath,
    /// The module `crate::` means here: the library's root, or a binary's.
    root: ModPath,
    is_bin: bool,
    scan: Scan,
    /// Names bound by `use` at the file's top level, resolved to absolute paths.
    top: HashMap<String, ModPath>,
    /// ... and anywhere in the file (inline modules, functions).
    any: HashMap<String, ModPath>,
    globs: Vec<ModPath>,
    /// ... of them, those at the file's top level.
    top_globs: Vec<ModPath>,
}

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// The module path of a file under `src/` (its path relative to `src/`), and the root its
/// `crate::` means.
fn module_of(rel: &Path) -> (ModPath, ModPath, bool) {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.strip_suffix(".rs").unwrap_or(&file).to_string();
    if parts.is_empty() && (stem == "lib" || stem == "main") {
        return if stem == "lib" {
            (vec![], vec![], false)
        } else {
            (
                vec!["bin".into(), "main".into()],
                vec!["bin".into(), "main".into()],
                true,
            )
        };
    }
    let is_bin = parts.first().map(String::as_str) == Some("bin");
    if !(stem == "mod" || (is_bin && parts.len() == 2 && stem == "main")) {
        parts.push(stem);
    }
    let root = if is_bin {
        parts[..2.min(parts.len())].to_vec()
    } else {
        vec![]
    };
    (parts, root, is_bin)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// An import of one module by another: where it is first written and how often.
#[derive(Clone, Debug)]
struct Edge {
    at: String,
    count: usize,
}

struct Crate<'t> {
    name: String,
    table_shown: String,
    table: &'t Table,
    files: Vec<SourceFile>,
    /// Module files (not test code), by module path.
    by_module: HashMap<ModPath, usize>,
    /// Module files and inline modules.
    all_mods: HashSet<ModPath>,
}

impl Crate<'_> {
    /// The absolute path a path written in `file` (in inline module `scope`) names, if it
    /// names something of this crate.
    fn start(
        &self,
        file: &SourceFile,
        any: &HashMap<String, ModPath>,
        scope: &[String],
        segs: &[String],
    ) -> Option<ModPath> {
        let ctx: ModPath = file.module.iter().chain(scope).cloned().collect();
        let join = |base: &[String], rest: &[String]| -> ModPath {
            base.iter().chain(rest).cloned().collect()
        };
        let first = segs.first()?.as_str();
        match first {
            "crate" => Some(join(&file.root, &segs[1..])),
            "self" => Some(join(&ctx, &segs[1..])),
            "super" => {
                let n = segs.iter().take_while(|s| *s == "super").count();
                let keep = ctx.len().checked_sub(n)?;
                Some(join(&ctx[..keep], &segs[n..]))
            }
            "::" | "Self" => None,
            _ if file.is_bin && first == self.table.lib_name => Some(segs[1..].to_vec()),
            _ => {
                let child = join(&ctx, &segs[..1]);
                if self.all_mods.contains(&child) {
                    return Some(join(&ctx, segs));
                }
                if let Some(bound) = any.get(first) {
                    return Some(join(bound, &segs[1..]));
                }
                file.globs
                    .iter()
                    .find(|g| self.all_mods.contains(&join(g, &segs[..1])))
                    .map(|g| join(g, segs))
            }
        }
    }

    /// The module file an absolute path leads to, following re-exports.
    fn target(&self, abs: &[String]) -> Option<ModPath> {
        let mut p: ModPath = abs.to_vec();
        for _ in 0..16 {
            let k = (0..=p.len())
                .rev()
                .find(|k| self.by_module.contains_key(&p[..*k]))?;
            if k < p.len() {
                let file = &self.files[self.by_module[&p[..k]]];
                // a name the module re-exports: by name, or from a glob (`pub use m::*`) whose
                // module defines or re-exports it
                let via_glob = || {
                    file.top_globs.iter().find_map(|g| {
                        let inner = &self.files[*self.by_module.get(g)?];
                        (inner.scan.items.contains(&p[k]) || inner.top.contains_key(&p[k]))
                            .then(|| g.iter().chain([&p[k]]).cloned().collect::<ModPath>())
                    })
                };
                if let Some(bound) = file.top.get(&p[k]).cloned().or_else(via_glob) {
                    let next: ModPath = bound.iter().chain(&p[k + 1..]).cloned().collect();
                    if next != p {
                        p = next;
                        continue;
                    }
                }
            }
            p.truncate(k);
            return Some(p);
        }
        None
    }
}

/// Checks the crate a table describes; `workspace` is the workspace root, `table_path` the
/// table file.
pub fn check(workspace: &Path, table_path: &Path) -> Outcome {
    let mut out = Outcome::default();
    let table_shown = table_path
        .strip_prefix(workspace)
        .unwrap_or(table_path)
        .display()
        .to_string();
    let text = match std::fs::read_to_string(table_path) {
        Ok(t) => t,
        Err(e) => {
            out.failures.push(format!("cannot read {table_shown}: {e}"));
            return out;
        }
    };
    let table = match table::parse(&text) {
        Ok(t) => t,
        Err(e) => {
            out.failures.push(format!("{table_shown}: {e}"));
            return out;
        }
    };
    let name = table_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    check_table(workspace, &name, &table_shown, &table, &mut out);
    out
}

fn check_table(workspace: &Path, name: &str, table_shown: &str, table: &Table, out: &mut Outcome) {
    let src = workspace.join(&table.src);
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    if paths.is_empty() {
        out.failures.push(format!(
            "{name}: no Rust files under {} ({table_shown}'s `src`)",
            table.src
        ));
        return;
    }
    let mut files = Vec::new();
    for p in paths {
        let rel = p.strip_prefix(&src).unwrap_or(&p);
        let (module, root, is_bin) = module_of(rel);
        let shown = p
            .strip_prefix(workspace)
            .unwrap_or(&p)
            .display()
            .to_string();
        let text = match std::fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) => {
                out.failures
                    .push(format!("{name}: cannot read {shown}: {e}"));
                continue;
            }
        };
        let scan = scan::scan(&text);
        for line in &scan.path_attrs {
            out.failures.push(format!(
                "{name}: {shown}:{line}: a #[path] attribute: the check maps files to modules by \
                 their place under src/ and does not follow it; move the file instead"
            ));
        }
        files.push(SourceFile {
            shown,
            module,
            root,
            is_bin,
            scan,
            top: HashMap::new(),
            any: HashMap::new(),
            globs: Vec::new(),
            top_globs: Vec::new(),
        });
    }
    // Test code: `#[cfg(test)] mod x;`, `#![cfg(test)]` files, modules named `tests`.
    let mut test_prefixes: Vec<ModPath> = Vec::new();
    for f in &files {
        for m in &f.scan.test_mods {
            let mut p = f.module.clone();
            p.push(m.clone());
            test_prefixes.push(p);
        }
        if f.scan.test_only {
            test_prefixes.push(f.module.clone());
        }
    }
    files.retain(|f| {
        !f.module.iter().any(|s| s == "tests")
            && !test_prefixes.iter().any(|t| f.module.starts_with(t))
    });
    let mut krate = Crate {
        name: name.into(),
        table_shown: table_shown.into(),
        table,
        by_module: files
            .iter()
            .enumerate()
            .map(|(k, f)| (f.module.clone(), k))
            .collect(),
        all_mods: HashSet::new(),
        files: Vec::new(),
    };
    for f in &files {
        krate.all_mods.insert(f.module.clone());
        for inline in &f.scan.inline_mods {
            krate
                .all_mods
                .insert(f.module.iter().chain(inline).cloned().collect());
        }
    }
    // What each file's `use`s bind (a `use` may build on another: repeat until settled).
    for f in &mut files {
        for _ in 0..4 {
            let mut top = HashMap::new();
            let mut any = HashMap::new();
            let mut globs = Vec::new();
            let mut top_globs = Vec::new();
            for u in &f.scan.uses {
                let Some(abs) = krate.start(f, &f.any, &u.scope, &u.path) else {
                    continue;
                };
                match &u.bind {
                    Bind::Name(n) => {
                        if u.scope.is_empty() {
                            top.entry(n.clone()).or_insert_with(|| abs.clone());
                        }
                        any.entry(n.clone()).or_insert(abs);
                    }
                    Bind::Glob => {
                        if u.scope.is_empty() {
                            top_globs.push(abs.clone());
                        }
                        globs.push(abs);
                    }
                    Bind::Nothing => {}
                }
            }
            let settled = any == f.any && globs == f.globs;
            f.top = top;
            f.any = any;
            f.globs = globs;
            f.top_globs = top_globs;
            if settled {
                break;
            }
        }
    }
    krate.files = files;
    let k = &krate;

    // The imports, module to module.
    let mut edges: BTreeMap<(ModPath, ModPath), Edge> = BTreeMap::new();
    for f in &k.files {
        let refs = f
            .scan
            .uses
            .iter()
            .map(|u| (&u.path, &u.scope, u.line))
            .chain(f.scan.paths.iter().map(|p| (&p.path, &p.scope, p.line)));
        for (path, scope, line) in refs {
            let Some(abs) = k.start(f, &f.any, scope, path) else {
                continue;
            };
            let Some(to) = k.target(&abs) else {
                continue;
            };
            if to == f.module || (f.is_bin && to.starts_with(&f.root)) {
                continue;
            }
            edges
                .entry((f.module.clone(), to))
                .and_modify(|e| e.count += 1)
                .or_insert(Edge {
                    at: format!("{}:{line}", f.shown),
                    count: 1,
                });
        }
    }
    judge(k, &edges, out);
}

fn judge(k: &Crate, edges: &BTreeMap<(ModPath, ModPath), Edge>, out: &mut Outcome) {
    let t = k.table;
    let name = &k.name;
    let table_shown = &k.table_shown;
    let mut report = String::new();
    let _ = writeln!(
        report,
        "{name}: {} module files under {}, {} imports between modules, {} layers (lowest first: {})",
        k.files.len(),
        t.src,
        edges.len(),
        t.layers.len(),
        t.layers
            .iter()
            .map(|l| format!("{} {}", l.number, l.name))
            .collect::<Vec<_>>()
            .join(", ")
    );

    // Every module has a layer; every prefix of the table still names a module.
    for f in &k.files {
        if t.entry(&show(&f.module)).is_none() {
            out.failures.push(format!(
                "{name}: module `{}` ({}) is in no layer: add its path, or a prefix of it, \
                 under a `layer` line of {table_shown}",
                show(&f.module),
                f.shown
            ));
        }
    }
    for e in &t.entries {
        if !k.files.iter().any(|f| within(&show(&f.module), &e.prefix)) {
            out.failures.push(format!(
                "{name}: {table_shown}:{}: `{}` names no module any more: remove it (or correct it)",
                e.line, e.prefix
            ));
        }
    }

    // Imports that go up.
    let mut used_ups = vec![0usize; t.ups.len()];
    let mut allowed = Vec::new();
    for ((from, to), edge) in edges {
        let (from_s, to_s) = (show(from), show(to));
        let (Some(fe), Some(te)) = (t.entry(&from_s), t.entry(&to_s)) else {
            continue;
        };
        let (fl, tl) = (&t.layers[fe.layer], &t.layers[te.layer]);
        if tl.number <= fl.number {
            continue;
        }
        let what = format!(
            "{from_s} -> {to_s} goes up ({} is layer {} {}, {} layer {} {}) at {}{}",
            fe.prefix,
            fl.number,
            fl.name,
            te.prefix,
            tl.number,
            tl.name,
            edge.at,
            if edge.count > 1 {
                format!(" (and {})", plural(edge.count - 1, "more place"))
            } else {
                String::new()
            }
        );
        // the most specific line that allows it (so that a line for a module inside another's
        // prefix is not stale)
        let allowing = t
            .ups
            .iter()
            .enumerate()
            .filter(|(_, u)| within(&from_s, &u.from) && within(&to_s, &u.to))
            .max_by_key(|(_, u)| u.from.len() + u.to.len())
            .map(|(k, _)| k);
        match allowing {
            Some(u) => {
                used_ups[u] += 1;
                allowed.push(format!("  {what}\n      allowed ({table_shown}:{}): {}", t.ups[u].line, t.ups[u].reason));
            }
            None => out.failures.push(format!(
                "{name}: {what}; import from the same or a lower layer, move the module, or list it \
                 in {table_shown} as `up {from_s} -> {to_s} REASON`"
            )),
        }
    }
    let _ = writeln!(
        report,
        "{} imports go up, allowed by the table:",
        allowed.len()
    );
    for a in &allowed {
        let _ = writeln!(report, "{a}");
    }
    for (u, n) in t.ups.iter().zip(&used_ups) {
        if *n == 0 {
            out.failures.push(format!(
                "{name}: {table_shown}:{}: stale exception `up {} -> {}`: no such import goes up \
                 any more (the table lists only what happens): delete the line",
                u.line, u.from, u.to
            ));
        }
    }

    // Cycles between units.
    for knot in &t.knots {
        let _ = writeln!(
            report,
            "knot {}: one unit for cycles ({table_shown}:{}): {}",
            knot.prefix, knot.line, knot.reason
        );
        if !t.entries.iter().any(|e| within(&e.unit, &knot.prefix)) {
            out.failures.push(format!(
                "{name}: {table_shown}:{}: knot `{}` holds no unit: remove it",
                knot.line, knot.prefix
            ));
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // per pair of units: the imports that do not go down (what to cut), and those that do
    let mut examples: BTreeMap<(String, String), (Vec<String>, Vec<String>)> = BTreeMap::new();
    for ((from, to), edge) in edges {
        let (from_s, to_s) = (show(from), show(to));
        let (Some(fu), Some(tu)) = (t.unit(&from_s), t.unit(&to_s)) else {
            continue;
        };
        graph.entry(tu.clone()).or_default();
        if fu != tu {
            graph.entry(fu.clone()).or_default().insert(tu.clone());
            let down = t.layer_number(&from_s) > t.layer_number(&to_s);
            let pair = examples.entry((fu, tu)).or_default();
            let list = if down { &mut pair.1 } else { &mut pair.0 };
            list.push(format!("{from_s} -> {to_s} ({})", edge.at));
        }
    }
    let cycles = strongly_connected(&graph);
    let mut used_cycles = vec![false; t.cycles.len()];
    let mut allowed_cycles = Vec::new();
    for units in cycles {
        let mut why = String::new();
        for a in &units {
            for b in &units {
                let Some((level, down)) = examples.get(&(a.clone(), b.clone())) else {
                    continue;
                };
                if !level.is_empty() {
                    let _ = write!(
                        why,
                        "\n      {a} imports {b} (not down): {}",
                        level.join(", ")
                    );
                }
                if let Some(first) = down.first() {
                    let _ = write!(
                        why,
                        "\n      {a} imports {b} (down: {}): {first}",
                        plural(down.len(), "import")
                    );
                    if down.len() > 1 {
                        why.push_str(", ...");
                    }
                }
            }
        }
        let listed = units.join(" ");
        match t.cycles.iter().position(|c| c.units == units) {
            Some(c) => {
                used_cycles[c] = true;
                allowed_cycles.push(format!(
                    "  cycle {listed}\n      allowed ({table_shown}:{}): {}{why}",
                    t.cycles[c].line, t.cycles[c].reason
                ));
            }
            None => {
                let near = t
                    .cycles
                    .iter()
                    .find(|c| units.iter().all(|u| c.units.contains(u)) || c.units.iter().all(|u| units.contains(u)))
                    .map(|c| {
                        format!(
                            " ({table_shown}:{} lists `cycle {} : ..`: the cycle is now `{listed}`: \
                             correct that line, or better break the cycle)",
                            c.line,
                            c.units.join(" ")
                        )
                    })
                    .unwrap_or_default();
                out.failures.push(format!(
                    "{name}: import cycle between units {listed}{near}; break it, or list it in \
                     {table_shown} as `cycle {listed} : REASON` (or make a knot of them):{why}"
                ));
            }
        }
    }
    let _ = writeln!(
        report,
        "{} import cycles between units, allowed by the table:",
        allowed_cycles.len()
    );
    for a in &allowed_cycles {
        let _ = writeln!(report, "{a}");
    }
    for (c, used) in t.cycles.iter().zip(&used_cycles) {
        if !used
            && !out
                .failures
                .iter()
                .any(|f| f.contains(&format!("{table_shown}:{} lists", c.line)))
        {
            out.failures.push(format!(
                "{name}: {table_shown}:{}: stale exception: units {} no longer form a cycle: delete \
                 the line `cycle {} : ...`",
                c.line,
                c.units.join(", "),
                c.units.join(" ")
            ));
        }
    }
    let _ = writeln!(
        report,
        "{}",
        if out.failures.is_empty() {
            format!("{name}: ok")
        } else {
            format!("{name}: {} problems", out.failures.len())
        }
    );
    out.report = report;
}

/// `3 imports`, `1 import`.
fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The strongly connected components of two nodes or more (Tarjan), each sorted.
fn strongly_connected(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: HashMap<&'g str, usize>,
        low: HashMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: HashSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: HashSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> BTreeMap<String, BTreeSet<String>> {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in pairs {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    }

    #[test]
    fn components() {
        let g = set(&[
            ("a", "b"),
            ("b", "c"),
            ("c", "a"),
            ("c", "d"),
            ("d", "e"),
            ("e", "d"),
            ("f", "a"),
        ]);
        assert_eq!(
            strongly_connected(&g),
            vec![vec!["a", "b", "c"], vec!["d", "e"]]
        );
        assert!(strongly_connected(&set(&[("a", "b"), ("b", "c")])).is_empty());
    }

    /// A small crate in a temporary directory, checked against `table` (its `src` is `src`).
    fn check_demo(table: &str, extra: &[(&str, &str)]) -> Outcome {
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ttprof-layers-{}-{run}", std::process::id()));
        let files = [
            ("src/lib.rs", "mod high;\nmod low;\npub use low::thing::Thing;\n"),
            (
                "src/low/mod.rs",
                "pub mod thing;\nuse crate::high::{self as h};\n\
                 #[cfg(test)]\nmod tests { use crate::high::Z; }\n",
            ),
            (
                "src/low/thing.rs",
                "pub struct Thing;\n// crate::high::X\nfn f() -> &'static str { \"crate::high\" }\n",
            ),
            ("src/low/tests.rs", "use crate::high::Y;\n"),
            ("src/high.rs", "use crate::Thing;\nfn g() { super::low::f(); }\n"),
            ("src/bin/tool.rs", "fn main() { demo::Thing; }\n"),
        ];
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files.iter().chain(extra) {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        std::fs::write(dir.join("demo.txt"), table).unwrap();
        let out = check(&dir, &dir.join("demo.txt"));
        let _ = std::fs::remove_dir_all(&dir);
        out
    }

    const DEMO: &str =
        "src src\ncrate demo\nlayer 1 low\n    low\nlayer 2 high\n    high\n    crate\n    bin\n";

    #[test]
    fn finds_imports_that_go_up_and_cycles() {
        let out = check_demo(DEMO, &[]);
        assert_eq!(out.failures.len(), 2, "{:#?}", out.failures);
        assert!(out.failures[0].contains(
            "demo: low -> high goes up (low is layer 1 low, high layer 2 high) at src/low/mod.rs:2"
        ));
        assert!(out.failures[1].contains("import cycle between units high low"));
        assert!(out.failures[1]
            .contains("high imports low (down: 2 imports): high -> low (src/high.rs:2), ..."));
        assert!(
            out.failures[1].contains("low imports high (not down): low -> high (src/low/mod.rs:2)")
        );

        let listed = format!("{DEMO}up low -> high today\ncycle low high : today\n");
        let out = check_demo(&listed, &[]);
        assert!(out.failures.is_empty(), "{:#?}", out.failures);
        assert!(
            out.report.contains("allowed (demo.txt:9): today"),
            "{}",
            out.report
        );
    }

    #[test]
    fn stale_lines_and_unknown_modules_fail() {
        let table = format!("{DEMO}    gone\nup low -> high today\nup low::thing -> high x\ncycle low high : today\ncycle high crate : no\n");
        let out = check_demo(&table, &[("src/extra.rs", "")]);
        let all = out.failures.join("\n");
        assert_eq!(out.failures.len(), 4, "{all}");
        assert!(
            all.contains("module `extra` (src/extra.rs) is in no layer"),
            "{all}"
        );
        assert!(
            all.contains("demo.txt:9: `gone` names no module any more"),
            "{all}"
        );
        assert!(
            all.contains(
                "demo.txt:11: stale exception `up low::thing -> high`: no such import goes up"
            ),
            "{all}"
        );
        assert!(
            all.contains("demo.txt:13: stale exception: units crate, high no longer form a cycle"),
            "{all}"
        );
    }

    #[test]
    fn a_listed_cycle_that_changed_says_so() {
        let table = format!("{DEMO}up low -> high today\ncycle low high crate : today\n");
        let out = check_demo(&table, &[]);
        assert_eq!(out.failures.len(), 1, "{:#?}", out.failures);
        assert!(
            out.failures[0].contains(
                "demo.txt:10 lists `cycle crate high low : ..`: the cycle is now `high low`"
            ),
            "{}",
            out.failures[0]
        );
    }

    #[test]
    fn glob_re_exports_are_followed() {
        let table = format!("{DEMO}layer 3 top\n    low::thing\n");
        let extra = [
            ("src/low/mod.rs", "pub mod thing;\npub use thing::*;\n"),
            ("src/high.rs", "fn g() -> crate::low::Thing { todo!() }\n"),
        ];
        let out = check_demo(&table, &extra);
        let all = out.failures.join("\n");
        assert!(all.contains("high -> low::thing goes up"), "{all}");
    }

    #[test]
    fn module_paths() {
        let m = |p: &str| module_of(Path::new(p));
        assert_eq!(m("lib.rs").0, Vec::<String>::new());
        assert_eq!(m("a/b.rs").0, vec!["a", "b"]);
        assert_eq!(m("a/b/mod.rs").0, vec!["a", "b"]);
        assert_eq!(
            m("bin/x-bench.rs"),
            (
                vec!["bin".into(), "x-bench".into()],
                vec!["bin".into(), "x-bench".into()],
                true
            )
        );
        assert_eq!(m("bin/y/main.rs").0, vec!["bin", "y"]);
        assert_eq!(m("bin/y/util.rs").1, vec!["bin", "y"]);
    }
}
