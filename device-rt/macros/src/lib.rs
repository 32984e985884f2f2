//! Procedural macros behind `ttprof-rt`'s `zone!`, `event!`, ... and `#[instrument]`.
//!
//! Use them through `ttprof-rt`, never directly: the runtime's macros decide, per build,
//! whether a site exists at all (profiling disabled builds expand to nothing).
//!
//! A site is a one-byte static in the `.ttprof_sites` section. The linker script places that
//! section at address 0 as an INFO section that is never loaded, so the static's address is
//! a small, collision-free zone id. The static's symbol name is a JSON object with the site's
//! metadata, which the host reads back from the ELF symbol table (the defmt approach):
//!
//! `{"v":1,"k":"zone","n":"read-tile","f":"src/bin/reader.rs","l":42,"c":13,"p":"kernels","u":3}`
//!
//! `k` kind, `n` name, `f` file, `l` line (1-based), `c` column (1-based), `p` package, `u` a
//! per-crate counter that keeps two sites from the same span distinct. A typed wait
//! (`wait!`, `sum_wait!`) adds `w`, the resource waited on: `"cb_front:16"`, `"cb_back:0"`,
//! `"noc_read"`, `"noc_write"`, `"noc_atomic"`, `"semaphore:3"` (the index, when there is one,
//! after a colon), `"sync:7"` for tt-metal's `SYNC_WAIT(name, 7)`. A signal (`signal!`, the
//! releasing side a wait is matched to) is an event site with `s`: `"cb_push:16"`,
//! `"cb_pop:0"`, `"sem_inc:3"`, `"sem_set:3"`, `"noc_read_done"`, `"noc_write_done"`,
//! `"noc_atomic_done"`, `"sync:7"`. The wire record is the zone's or the event's: the type
//! costs the device nothing.
#![warn(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::quote;
use std::sync::atomic::{AtomicU32, Ordering};
use syn::parse::{Parse, ParseStream};
use syn::{parse_macro_input, Ident, ItemFn, LitInt, LitStr, Path, Token};

static COUNTER: AtomicU32 = AtomicU32::new(0);

const KINDS: [&str; 10] = [
    "zone",
    "value_zone",
    "event",
    "data",
    "sum",
    "counted_fpu",
    "counted_instrn",
    "counted_unpack",
    "counted_pack",
    "counted_l1",
];

struct SiteArgs {
    krate: Path,
    kind: Ident,
    name: LitStr,
    /// The resource as written: (identifier, index).
    resource: Option<(Ident, Option<u32>)>,
}

/// Resources a typed wait may name: (spelling, whether it takes an index).
const WAITS: [(&str, bool); 9] = [
    ("cb_front", true),
    ("cb_back", true),
    ("noc_read", false),
    ("noc_write", false),
    ("noc_atomic", false),
    ("semaphore", true),
    ("sync", true),
    ("tensix_sem", true),
    ("ttsync", false),
];

const WAIT_USAGE: &str = "cb_front(N), cb_back(N), noc_read, noc_write, noc_atomic, semaphore(N), sync(N), tensix_sem(N) or ttsync, N an integer literal";

/// Resources a signal may name: (spelling, whether it takes an index).
const SIGNALS: [(&str, bool); 9] = [
    ("cb_push", true),
    ("cb_pop", true),
    ("sem_inc", true),
    ("sem_set", true),
    ("noc_read_done", false),
    ("noc_write_done", false),
    ("noc_atomic_done", false),
    ("sync", true),
    ("tensix_sem_post", true),
];

const SIGNAL_USAGE: &str = "cb_push(N), cb_pop(N), sem_inc(N), sem_set(N), noc_read_done, noc_write_done, noc_atomic_done, sync(N) or tensix_sem_post(N), N an integer literal";

/// `cb_front(16)`, `noc_read`, ...: an identifier and, in parentheses, an index.
fn parse_resource(input: ParseStream) -> syn::Result<(Ident, Option<u32>)> {
    let what: Ident = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("a wait or signal names its resource: {WAIT_USAGE} for a wait, {SIGNAL_USAGE} for a signal"),
        )
    })?;
    if !input.peek(syn::token::Paren) {
        return Ok((what, None));
    }
    let inner;
    syn::parenthesized!(inner in input);
    let index: LitInt = inner.parse().map_err(|e| {
        syn::Error::new(e.span(), format!("`{what}` takes an integer literal index"))
    })?;
    Ok((what, Some(index.base10_parse()?)))
}

/// The `w` (a wait) or `s` (a signal) of the site's metadata, checked against `table`.
fn resource_meta(
    (what, index): &(Ident, Option<u32>),
    table: &[(&str, bool)],
    role: &str,
    usage: &str,
) -> syn::Result<String> {
    let w = what.to_string();
    let Some(&(_, indexed)) = table.iter().find(|(n, _)| *n == w) else {
        return Err(syn::Error::new(
            what.span(),
            format!("unknown {role} resource `{w}`: expected {usage}"),
        ));
    };
    match (indexed, index) {
        (true, Some(n)) => Ok(format!("{w}:{n}")),
        (false, None) => Ok(w),
        (true, None) => Err(syn::Error::new(
            what.span(),
            format!("`{w}` takes an index: {usage}"),
        )),
        (false, Some(_)) => Err(syn::Error::new(
            what.span(),
            format!("`{w}` takes no index: {usage}"),
        )),
    }
}

impl Parse for SiteArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let krate: Path = input.parse()?;
        input.parse::<Token![,]>()?;
        let kind: Ident = input.parse()?;
        input.parse::<Token![,]>()?;
        let name: LitStr = input.parse()?;
        let resource = if input.parse::<Option<Token![,]>>()?.is_some() {
            Some(parse_resource(input)?)
        } else {
            None
        };
        if !input.is_empty() {
            return Err(input.error(format!(
                "unexpected tokens after the resource: expected {WAIT_USAGE} for a wait, {SIGNAL_USAGE} for a signal"
            )));
        }
        Ok(SiteArgs {
            krate,
            kind,
            name,
            resource,
        })
    }
}

fn json_escape(s: &str, out: &mut String) {
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
}

fn site_json(kind: &str, name: &str, resource: Option<&str>, span: Span) -> String {
    let start = span.unwrap().start();
    let file = span.unwrap().file();
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    let counter = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut j = String::from("{\"v\":1,\"k\":\"");
    j.push_str(kind);
    j.push_str("\",\"n\":\"");
    json_escape(name, &mut j);
    j.push_str("\",\"f\":\"");
    json_escape(&file, &mut j);
    j.push_str(&format!(
        "\",\"l\":{},\"c\":{},\"p\":\"",
        start.line(),
        start.column()
    ));
    json_escape(&package, &mut j);
    if let Some(r) = resource {
        // An event's resource is what it signals, a zone's what it waits on.
        j.push_str(if kind == "event" {
            "\",\"s\":\""
        } else {
            "\",\"w\":\""
        });
        j.push_str(r);
    }
    j.push_str(&format!("\",\"u\":{counter}}}"));
    j
}

fn site_expr(
    krate: &Path,
    kind: &str,
    name: &LitStr,
    wait: Option<&str>,
) -> syn::Result<proc_macro2::TokenStream> {
    let value = name.value();
    // What the macro records, and a call that works.
    let (what, example) = match kind {
        "event" => ("an event", "event!(\"barrier\")"),
        "data" => ("a data record", "data!(\"bytes\", n as u64)"),
        "sum" => ("a sum zone", "sum_zone!(\"wait-cb\")"),
        "value_zone" => ("a value zone", "value_zone!(\"tiles\", n)"),
        k if k.starts_with("counted_") => ("a counted zone", "counted_zone!(\"matmul\", fpu)"),
        _ => ("a zone", "zone!(\"read-tile\")"),
    };
    if value.is_empty() {
        return Err(syn::Error::new(
            name.span(),
            format!("{what} name cannot be empty: name it, e.g. `{example}`"),
        ));
    }
    if value.contains('\0') {
        return Err(syn::Error::new(
            name.span(),
            format!("{what} name cannot contain NUL (names are C strings in the kernel ELF): remove the \\0"),
        ));
    }
    let json = site_json(kind, &value, wait, name.span());
    Ok(quote! {{
        #[link_section = ".ttprof_sites"]
        #[export_name = #json]
        static __TTPROF_SITE: u8 = 0;
        #krate::Site::__new(&__TTPROF_SITE, #json)
    }})
}

/// `__site!(crate_path, kind, "name")`: a `Site` for a new, unique site;
/// `__site!(crate_path, zone, "name", cb_front(16))`: the same, typed as a wait on a resource;
/// `__site!(crate_path, event, "name", cb_push(16))`: an event that signals a resource.
#[proc_macro]
pub fn __site(input: TokenStream) -> TokenStream {
    let SiteArgs {
        krate,
        kind,
        name,
        resource,
    } = parse_macro_input!(input as SiteArgs);
    let k = kind.to_string();
    if !KINDS.contains(&k.as_str()) {
        return syn::Error::new(
            kind.span(),
            format!("unknown site kind `{k}`, expected one of {KINDS:?}"),
        )
        .to_compile_error()
        .into();
    }
    let wait = match (&resource, k.as_str()) {
        (None, _) => Ok(None),
        (Some(r), "zone" | "sum") => resource_meta(r, &WAITS, "wait", WAIT_USAGE).map(Some),
        (Some(r), "event") => resource_meta(r, &SIGNALS, "signal", SIGNAL_USAGE).map(Some),
        (Some(_), _) => Err(syn::Error::new(
            kind.span(),
            format!(
                "only a zone or a sum zone can be a wait and only an event a signal, not a `{k}`"
            ),
        )),
    };
    let wait = match wait {
        Ok(w) => w,
        Err(e) => return e.to_compile_error().into(),
    };
    match site_expr(&krate, &k, &name, wait.as_deref()) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `#[instrument]` / `#[instrument("name")]` on a function: its whole body is a zone, named
/// after the function unless a name is given. Expands to `::ttprof_rt::zone!`, so a build
/// without the `profile` feature gets the function unchanged.
#[proc_macro_attribute]
pub fn instrument(attr: TokenStream, item: TokenStream) -> TokenStream {
    let name: Option<LitStr> = if attr.is_empty() {
        None
    } else {
        Some(parse_macro_input!(attr as LitStr))
    };
    let mut f = parse_macro_input!(item as ItemFn);
    let name = name.unwrap_or_else(|| LitStr::new(&f.sig.ident.to_string(), f.sig.ident.span()));
    let body = &f.block;
    f.block = syn::parse_quote!({
        let __ttprof_zone = ::ttprof_rt::zone!(#name);
        #body
    });
    quote!(#f).into()
}
