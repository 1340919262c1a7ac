//! Shared implementation of `#[weft::main]` and `#[weft::test]`.
//!
//! The work is split in three steps: parse the annotated function (keeping
//! its body as raw tokens, so their spans survive untouched), read the
//! attribute arguments into a [`Config`], and emit the synchronous wrapper.
//! Any error from the last two steps is reported next to a best-effort
//! expansion with the default configuration.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{braced, token, Attribute, Expr, Lit, Meta, Path, ReturnType, Signature, Token, Type};

/// Which attribute is being expanded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Main,
    Test,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Main => "main",
            Kind::Test => "test",
        }
    }

    fn default_flavor(self) -> Flavor {
        match self {
            Kind::Main => Flavor::MultiThread,
            Kind::Test => Flavor::CurrentThread,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Flavor {
    CurrentThread,
    MultiThread,
    /// A current-thread `LocalRuntime` (`Builder::build_local`).
    Local,
}

impl Flavor {
    fn name(self) -> &'static str {
        match self {
            Flavor::CurrentThread => "current_thread",
            Flavor::MultiThread => "multi_thread",
            Flavor::Local => "local",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        match name {
            "current_thread" => Some(Flavor::CurrentThread),
            "multi_thread" => Some(Flavor::MultiThread),
            "local" => Some(Flavor::Local),
            _ => None,
        }
    }

    fn constructor(self) -> &'static str {
        match self {
            Flavor::CurrentThread | Flavor::Local => "new_current_thread",
            Flavor::MultiThread => "new_multi_thread",
        }
    }

    /// The builder call that makes the runtime, after the knobs.
    fn build(self, crate_path: &Path) -> TokenStream {
        match self {
            Flavor::Local => {
                quote!(build_local(#crate_path::runtime::LocalOptions::default()))
            }
            Flavor::CurrentThread | Flavor::MultiThread => quote!(build()),
        }
    }
}

/// The argument names the attributes accept, in the order error messages
/// list them.
const ARGUMENTS: &[&str] = &["flavor", "worker_threads", "start_paused", "crate", "name"];

/// What the attribute arguments asked for, after validation.
struct Config {
    flavor: Flavor,
    worker_threads: Option<syn::LitInt>,
    start_paused: Option<syn::LitBool>,
    crate_path: Path,
    /// The runtime's name (`Builder::name`).
    name: Option<syn::LitStr>,
}

impl Config {
    fn default_for(kind: Kind) -> Self {
        Config {
            flavor: kind.default_flavor(),
            worker_threads: None,
            start_paused: None,
            crate_path: default_crate_path(),
            name: None,
        }
    }
}

/// Where the expansion finds weft when no `crate = "..."` is given: under
/// the name the calling package's Cargo.toml gives it, so that
/// `tokio = { package = "weft", ... }` makes `#[tokio::main]` expand to
/// `::tokio::runtime::...`. A package that depends on no `weft` but on a
/// `tokio` reached these macros through `weft-tokio`, the `tokio` stand-in
/// that `[patch.crates-io]` swaps in, which re-exports weft at Tokio's
/// paths: `::tokio` (or the name it is given) then. `::weft` when neither
/// can be found (weft's own tests and doctests, where the package *is*
/// weft; or another re-export, which needs `crate = "..."`).
fn default_crate_path() -> Path {
    use proc_macro_crate::{crate_name, FoundCrate};
    let named = |name: String| -> Path {
        let ident = syn::Ident::new(&name, proc_macro2::Span::call_site());
        syn::parse_quote!(::#ident)
    };
    match crate_name("weft") {
        Ok(FoundCrate::Name(name)) => named(name),
        Ok(FoundCrate::Itself) => syn::parse_quote!(::weft),
        Err(_) => match crate_name("tokio") {
            Ok(FoundCrate::Name(name)) => named(name),
            Ok(FoundCrate::Itself) => syn::parse_quote!(::tokio),
            Err(_) => syn::parse_quote!(::weft),
        },
    }
}

/// The annotated function. The body is kept as tokens rather than parsed as
/// statements: it is only ever moved into an `async` block, and leaving it
/// alone keeps expansion cheap and every span exactly as the user wrote it.
struct EntryFn {
    attrs: Vec<Attribute>,
    vis: syn::Visibility,
    sig: Signature,
    brace: token::Brace,
    inner_attrs: Vec<Attribute>,
    body: TokenStream,
}

impl Parse for EntryFn {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let content;
        let brace = braced!(content in input);
        let inner_attrs = content.call(Attribute::parse_inner)?;
        let body = content.parse()?;
        Ok(EntryFn {
            attrs,
            vis,
            sig,
            brace,
            inner_attrs,
            body,
        })
    }
}

/// Collects errors so that one expansion can report several problems.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    fn push_result<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Entry point shared by both attributes.
pub(crate) fn expand(kind: Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    let function: EntryFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        // Not something we can rewrite: hand it back unchanged, so the
        // compiler reports on it as written, next to our error.
        Err(e) => {
            let mut out = item;
            out.extend(e.to_compile_error());
            return out;
        }
    };

    let mut errors = Errors::default();
    check_function(kind, &function, &mut errors);
    let config = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args) {
        Ok(args) => {
            let (config, result) = parse_config(kind, args);
            errors.push_result(result);
            config
        }
        Err(e) => {
            errors.push(e);
            Config::default_for(kind)
        }
    };

    match errors.finish() {
        Ok(()) => emit(kind, function, &config),
        // Still expand the function, so that the compiler does not pile
        // further errors on top of ours (such as "`main` function is not
        // allowed to be `async`"). Keep the flavor and `crate` path that
        // could be read, but no builder knobs, which may be the mistake.
        Err(e) => {
            let fallback = Config {
                worker_threads: None,
                start_paused: None,
                name: None,
                ..config
            };
            let mut out = emit(kind, function, &fallback);
            out.extend(e.to_compile_error());
            out
        }
    }
}

/// Checks the shape of the function itself.
fn check_function(kind: Kind, function: &EntryFn, errors: &mut Errors) {
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new_spanned(
            sig.fn_token,
            "the `async` keyword is missing from the function declaration",
        ));
    }
    match kind {
        Kind::Main if sig.ident == "main" && !sig.inputs.is_empty() => {
            errors.push(syn::Error::new_spanned(
                &sig.inputs,
                "the main function cannot accept arguments",
            ));
        }
        Kind::Test if !sig.inputs.is_empty() => {
            errors.push(syn::Error::new_spanned(
                &sig.inputs,
                "the test function cannot accept arguments",
            ));
        }
        _ => {}
    }
    if kind == Kind::Test {
        if let Some(attr) = function.attrs.iter().find(|a| is_builtin_test(a)) {
            errors.push(syn::Error::new_spanned(
                attr,
                "a second test attribute is supplied; `#[weft::test]` already \
                 adds `#[test]`, remove this one",
            ));
        }
    }
}

/// Whether `attr` is the standard library's `#[test]`, under one of the
/// paths it is commonly written with.
fn is_builtin_test(attr: &Attribute) -> bool {
    let Meta::Path(path) = &attr.meta else {
        return false;
    };
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match segments.as_slice() {
        [only] => only == "test",
        [root, prelude, _edition, last] => {
            (root == "core" || root == "std") && prelude == "prelude" && last == "test"
        }
        _ => false,
    }
}

/// Reads and validates the attribute arguments. The configuration is
/// returned even when there are errors, holding whatever could be read, so
/// that the fallback expansion still uses, say, the right `crate` path.
fn parse_config(kind: Kind, args: Punctuated<Meta, Token![,]>) -> (Config, syn::Result<()>) {
    let mut errors = Errors::default();
    let mut flavor: Option<Flavor> = None;
    let mut worker_threads: Option<syn::LitInt> = None;
    let mut start_paused: Option<syn::LitBool> = None;
    let mut crate_path: Option<Path> = None;
    let mut runtime_name: Option<syn::LitStr> = None;
    let mut seen: Vec<String> = Vec::new();

    for meta in args {
        let name = match meta.path().get_ident() {
            Some(ident) => ident.to_string(),
            None => {
                errors.push(unknown_argument(meta.path()));
                continue;
            }
        };
        if !ARGUMENTS.contains(&name.as_str()) {
            let error = match (&meta, Flavor::from_name(&name)) {
                (Meta::Path(_), Some(_)) => syn::Error::new_spanned(
                    meta.path(),
                    format!("set the runtime flavor with `flavor = \"{name}\"`"),
                ),
                _ => unknown_argument(meta.path()),
            };
            errors.push(error);
            continue;
        }
        if seen.contains(&name) {
            errors.push(syn::Error::new_spanned(
                meta.path(),
                format!("the `{name}` argument is set more than once"),
            ));
            continue;
        }
        seen.push(name.clone());

        let value = match &meta {
            Meta::NameValue(nv) => &nv.value,
            _ => {
                errors.push(syn::Error::new_spanned(
                    &meta,
                    format!("the `{name}` argument expects a value: `{name} = ...`"),
                ));
                continue;
            }
        };
        match name.as_str() {
            "flavor" => flavor = errors.push_result(parse_flavor(value)),
            "worker_threads" => worker_threads = errors.push_result(parse_worker_threads(value)),
            "start_paused" => start_paused = errors.push_result(parse_start_paused(value)),
            "crate" => crate_path = errors.push_result(parse_crate_path(value)),
            "name" => runtime_name = errors.push_result(parse_name(value)),
            _ => unreachable!("every name in ARGUMENTS is handled"),
        }
    }

    let flavor_was_given = flavor.is_some();
    let flavor = flavor.unwrap_or(kind.default_flavor());
    let attr = format!("#[weft::{}]", kind.name());
    let hint = |wanted: Flavor| {
        if flavor_was_given {
            format!("; use `flavor = \"{}\"`", wanted.name())
        } else {
            format!(
                "; the default flavor of `{attr}` is `{}`, add `flavor = \"{}\"`",
                flavor.name(),
                wanted.name()
            )
        }
    };
    if let (Some(lit), Flavor::CurrentThread | Flavor::Local) = (&worker_threads, flavor) {
        errors.push(syn::Error::new(
            lit.span(),
            format!(
                "the `worker_threads` argument requires the `multi_thread` flavor{}",
                hint(Flavor::MultiThread)
            ),
        ));
    }
    if let (Some(lit), Flavor::MultiThread) = (&start_paused, flavor) {
        errors.push(syn::Error::new(
            lit.span(),
            format!(
                "the `start_paused` argument requires the `current_thread` flavor{}",
                hint(Flavor::CurrentThread)
            ),
        ));
    }

    let config = Config {
        flavor,
        worker_threads,
        start_paused,
        crate_path: crate_path.unwrap_or_else(default_crate_path),
        name: runtime_name,
    };
    (config, errors.finish())
}

fn unknown_argument(path: &Path) -> syn::Error {
    let name = path.to_token_stream().to_string().replace(' ', "");
    let expected = ARGUMENTS
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ");
    // Two names Tokio's attributes know without taking them on stable.
    let note = match name.as_str() {
        "core_threads" => "; `core_threads` is now called `worker_threads`",
        "unhandled_panic" => {
            "; `unhandled_panic` needs Tokio's unstable API (`tokio_unstable`), which weft \
             does not have"
        }
        _ => "",
    };
    syn::Error::new_spanned(
        path,
        format!("unknown argument `{name}`; expected one of {expected}{note}"),
    )
}

/// The literal in `value`, or an error that says what kind was expected.
fn literal<'a>(value: &'a Expr, name: &str, example: &str) -> syn::Result<&'a Lit> {
    match value {
        Expr::Lit(expr) => Ok(&expr.lit),
        // `flavor = ("x")` and the like, and values built by other macros.
        Expr::Group(group) => literal(&group.expr, name, example),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("the `{name}` argument expects a literal, e.g. `{name} = {example}`"),
        )),
    }
}

fn parse_flavor(value: &Expr) -> syn::Result<Flavor> {
    let example = "\"multi_thread\"";
    match literal(value, "flavor", example)? {
        Lit::Str(s) => match Flavor::from_name(&s.value()) {
            Some(flavor) => Ok(flavor),
            None => Err(syn::Error::new(
                s.span(),
                format!(
                    "unknown runtime flavor `{}`; expected `current_thread`, `multi_thread` \
                     or `local`",
                    s.value()
                ),
            )),
        },
        other => Err(syn::Error::new(
            other.span(),
            format!("the `flavor` argument expects a string, e.g. `flavor = {example}`"),
        )),
    }
}

fn parse_worker_threads(value: &Expr) -> syn::Result<syn::LitInt> {
    match literal(value, "worker_threads", "4")? {
        Lit::Int(n) => {
            if n.base10_parse::<usize>()? == 0 {
                Err(syn::Error::new(
                    n.span(),
                    "the `worker_threads` argument must be greater than 0",
                ))
            } else {
                // Drop any suffix (`4u8`): the builder takes a `usize`.
                let digits = n.base10_digits();
                Ok(syn::LitInt::new(digits, n.span()))
            }
        }
        other => Err(syn::Error::new(
            other.span(),
            "the `worker_threads` argument expects an integer, e.g. `worker_threads = 4`",
        )),
    }
}

fn parse_start_paused(value: &Expr) -> syn::Result<syn::LitBool> {
    match literal(value, "start_paused", "true")? {
        Lit::Bool(b) => Ok(b.clone()),
        other => Err(syn::Error::new(
            other.span(),
            "the `start_paused` argument expects `true` or `false`",
        )),
    }
}

fn parse_crate_path(value: &Expr) -> syn::Result<Path> {
    match literal(value, "crate", "\"::weft\"")? {
        // Parsing through the literal gives every token of the path the
        // literal's span, so resolution errors point at the argument.
        Lit::Str(s) => s.parse::<Path>().map_err(|e| {
            syn::Error::new(
                s.span(),
                format!("the `crate` argument must hold a path, e.g. `crate = \"::weft\"`: {e}"),
            )
        }),
        other => Err(syn::Error::new(
            other.span(),
            "the `crate` argument expects a string holding a path, e.g. `crate = \"::weft\"`",
        )),
    }
}

/// The runtime's name. A blank one is left to `Builder::name`, which
/// panics on it when the function runs, as Tokio's attribute does.
fn parse_name(value: &Expr) -> syn::Result<syn::LitStr> {
    match literal(value, "name", "\"my-runtime\"")? {
        Lit::Str(s) => Ok(s.clone()),
        other => Err(syn::Error::new(
            other.span(),
            "the `name` argument expects a string, e.g. `name = \"my-runtime\"`",
        )),
    }
}

/// Whether `ty` can be written as a type inside the function body: not
/// `!` (unstable outside return position) and not `impl Trait` (only
/// allowed in the signature).
fn nameable_in_body(ty: &Type) -> bool {
    fn mentions_impl(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|tt| match tt {
            proc_macro2::TokenTree::Ident(ident) => ident == "impl",
            proc_macro2::TokenTree::Group(group) => mentions_impl(group.stream()),
            _ => false,
        })
    }
    !matches!(ty, Type::Never(_)) && !mentions_impl(ty.to_token_stream())
}

/// Writes the synchronous wrapper.
fn emit(kind: Kind, function: EntryFn, config: &Config) -> TokenStream {
    let EntryFn {
        attrs,
        vis,
        mut sig,
        brace,
        inner_attrs,
        body,
    } = function;

    // Adding `#[test]` to a function that takes arguments, or that already
    // has one, would only add a second error to the one already reported.
    let test_attr =
        (kind == Kind::Test && sig.inputs.is_empty() && !attrs.iter().any(is_builtin_test))
            .then(|| quote!(#[::core::prelude::v1::test]));

    sig.asyncness = None;

    // The user's block, with its own brace spans.
    let mut user_block = TokenStream::new();
    brace.surround(&mut user_block, |tokens| tokens.extend(body));

    // The macro's own locals resolve at the macro's definition site, so the
    // user's code can neither see nor shadow them.
    let body_var = syn::Ident::new("body", Span::mixed_site());
    let output_var = syn::Ident::new("output", Span::mixed_site());

    // The declared return type, when it can be spelled inside the body.
    let output = match &sig.output {
        ReturnType::Default => Some(quote!(())),
        ReturnType::Type(_, ty) if nameable_in_body(ty) => Some(ty.to_token_stream()),
        ReturnType::Type(..) => None,
    };

    // Binding the user's block to a variable of the declared return type
    // checks it where it is written: a wrong tail expression is reported at
    // that expression rather than at the `block_on` call the macro adds,
    // and `?` and `.into()` in the body know the type they convert into.
    //
    // Nothing may follow the user's block in the same statement: a body
    // that ends in `panic!()` or `loop {}` would make whatever follows
    // unreachable and earn the user a warning. Hence a `let`, and an
    // `allow` on the one statement after it, which the user's code is not
    // part of. Clippy, for its part, calls a block ending in `panic!()`
    // a diverging sub-expression once it is a `let` initializer; that lint
    // has to be allowed on the `let` itself.
    //
    // The block is not `move`, as in Tokio: the arguments stay the
    // function's (the body captures what it uses as a closure would), so
    // those it does not consume are dropped when the function returns,
    // after the runtime, not inside it.
    let async_body = match &output {
        Some(output) => quote! {
            async {
                #[allow(clippy::diverging_sub_expression)]
                let #output_var: #output = #user_block;
                #[allow(unreachable_code, clippy::needless_return, clippy::let_and_return)]
                return #output_var;
            }
        },
        None => quote!(async #user_block),
    };

    // Tests pin their body as a `dyn Future`, so that each test does not
    // instantiate `block_on` for its own future type.
    let pin_body = match (kind, &output) {
        (Kind::Test, Some(output)) => quote! {
            let #body_var = ::core::pin::pin!(#body_var);
            let #body_var: ::core::pin::Pin<&mut dyn ::core::future::Future<Output = #output>> = #body_var;
        },
        _ => TokenStream::new(),
    };

    let crate_path = &config.crate_path;
    let constructor = syn::Ident::new(config.flavor.constructor(), Span::call_site());
    let build = config.flavor.build(crate_path);
    let worker_threads = config
        .worker_threads
        .as_ref()
        .map(|n| quote_spanned!(n.span()=> .worker_threads(#n)));
    let start_paused = config
        .start_paused
        .as_ref()
        .map(|b| quote_spanned!(b.span()=> .start_paused(#b)));
    let name = config
        .name
        .as_ref()
        .map(|n| quote_spanned!(n.span()=> .name(#n)));

    // The lint `allow`s need a statement to sit on (attributes on a tail
    // expression are unstable), hence a block statement ending in an
    // explicit `return` rather than a tail expression. The allowed lints
    // are the ones a user's `clippy::restriction` or `-> !` signature could
    // otherwise raise on code they did not write.
    let fn_body = quote! {
        #(#inner_attrs)*
        let #body_var = #async_body;
        #pin_body
        #[allow(
            clippy::expect_used,
            clippy::diverging_sub_expression,
            clippy::needless_return
        )]
        {
            return #crate_path::runtime::Builder::#constructor()
                #worker_threads
                #start_paused
                #name
                .enable_all()
                .#build
                .expect("Failed building the Runtime")
                .block_on(#body_var);
        }
    };
    // The function's braces are the user's: with the macro's own, the
    // function would count as macro-made, and the compiler would not
    // warn when it is never used (as it does under Tokio's attribute).
    let mut fn_body_block = TokenStream::new();
    brace.surround(&mut fn_body_block, |tokens| tokens.extend(fn_body));
    let fn_body = fn_body_block;

    quote! {
        #test_attr
        #(#attrs)*
        #vis #sig #fn_body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kind: Kind, args: &str, item: &str) -> String {
        let args: TokenStream = args.parse().unwrap();
        let item: TokenStream = item.parse().unwrap();
        expand(kind, args, item).to_string()
    }

    fn compact(s: &str) -> String {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    }

    #[::core::prelude::v1::test]
    fn main_defaults_to_multi_thread() {
        let out = compact(&run(Kind::Main, "", "async fn main() {}"));
        assert!(
            out.contains("::weft::runtime::Builder::new_multi_thread()"),
            "{out}"
        );
        assert!(out.contains("fnmain()"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
        assert!(!out.contains("#[::core::prelude::v1::test]"), "{out}");
    }

    #[::core::prelude::v1::test]
    fn test_defaults_to_current_thread() {
        let out = compact(&run(Kind::Test, "", "async fn t() {}"));
        assert!(out.starts_with("#[::core::prelude::v1::test]"), "{out}");
        assert!(out.contains("Builder::new_current_thread()"), "{out}");
        assert!(
            out.contains("dyn::core::future::Future<Output=()>"),
            "{out}"
        );
    }

    #[::core::prelude::v1::test]
    fn knobs_are_forwarded() {
        let out = compact(&run(
            Kind::Test,
            r#"flavor = "multi_thread", worker_threads = 3, crate = "my::rt""#,
            "async fn t() -> Result<(), E> { Ok(()) }",
        ));
        assert!(
            out.contains(
                "my::rt::runtime::Builder::new_multi_thread().worker_threads(3).enable_all()"
            ),
            "{out}"
        );
        assert!(out.contains("Output=Result<(),E>"), "{out}");

        let out = compact(&run(
            Kind::Test,
            r#"flavor = "local", start_paused = true"#,
            "async fn t() {}",
        ));
        assert!(
            out.contains(
                "new_current_thread().start_paused(true).enable_all()\
                 .build_local(::weft::runtime::LocalOptions::default())"
            ),
            "{out}"
        );

        let out = compact(&run(Kind::Main, r#"name = "rt-7""#, "async fn main() {}"));
        assert!(
            out.contains(r#"new_multi_thread().name("rt-7").enable_all()"#),
            "{out}"
        );

        let out = compact(&run(Kind::Test, "start_paused = true", "async fn t() {}"));
        assert!(
            out.contains("new_current_thread().start_paused(true).enable_all()"),
            "{out}"
        );
    }

    #[::core::prelude::v1::test]
    fn errors_name_the_problem() {
        let cases: &[(Kind, &str, &str, &str)] = &[
            (
                Kind::Main,
                "",
                "fn main() {}",
                "the `async` keyword is missing",
            ),
            (
                Kind::Main,
                "",
                "async fn main(x: u8) {}",
                "cannot accept arguments",
            ),
            (
                Kind::Test,
                "",
                "async fn t(x: u8) {}",
                "cannot accept arguments",
            ),
            (
                Kind::Main,
                "foo = 1",
                "async fn main() {}",
                "unknown argument `foo`",
            ),
            (
                Kind::Main,
                r#"flavor = "local", worker_threads = 2"#,
                "async fn main() {}",
                "requires the `multi_thread` flavor",
            ),
            (
                Kind::Main,
                "name = 7",
                "async fn main() {}",
                "`name` argument expects a string",
            ),
            (
                Kind::Test,
                r#"unhandled_panic = "shutdown_runtime""#,
                "async fn t() {}",
                "needs Tokio's unstable API",
            ),
            (
                Kind::Main,
                "worker_threads = 0",
                "async fn main() {}",
                "greater than 0",
            ),
            (
                Kind::Main,
                r#"flavor = "current_thread", worker_threads = 2"#,
                "async fn main() {}",
                "requires the `multi_thread` flavor",
            ),
            (
                Kind::Test,
                "worker_threads = 2",
                "async fn t() {}",
                "default flavor",
            ),
            (
                Kind::Main,
                "start_paused = true",
                "async fn main() {}",
                "requires the `current_thread`",
            ),
            (
                Kind::Main,
                r#"flavor = "single""#,
                "async fn main() {}",
                "unknown runtime flavor",
            ),
            (
                Kind::Main,
                "multi_thread",
                "async fn main() {}",
                "flavor = \\\"multi_thread\\\"",
            ),
            (
                Kind::Main,
                "flavor = 1, flavor = 2",
                "async fn main() {}",
                "more than once",
            ),
            (
                Kind::Test,
                "",
                "#[test] async fn t() {}",
                "second test attribute",
            ),
        ];
        for (kind, args, item, needle) in cases {
            let out = run(*kind, args, item);
            assert!(out.contains("compile_error"), "{args} / {item}: {out}");
            assert!(
                out.contains(needle),
                "{args} / {item}: expected {needle:?} in {out}"
            );
        }
    }

    #[::core::prelude::v1::test]
    fn unparsable_item_is_returned_as_is() {
        let out = run(Kind::Main, "", "struct S;");
        assert!(out.starts_with("struct S ;"), "{out}");
        assert!(out.contains("compile_error"), "{out}");
    }

    #[::core::prelude::v1::test]
    fn recovery_still_expands() {
        // An argument error still yields a plain `fn main`, so the compiler
        // does not add "`main` function is not allowed to be `async`".
        let out = compact(&run(Kind::Main, "bogus", "async fn main() {}"));
        assert!(out.contains("fnmain()"), "{out}");
        assert!(!out.contains("asyncfnmain"), "{out}");
        assert!(out.contains("compile_error"), "{out}");

        // The `crate` path survives another argument's error; builder
        // knobs do not, since they may be what is wrong.
        let out = compact(&run(
            Kind::Main,
            r#"crate = "my::rt", flavor = "current_thread", worker_threads = 2"#,
            "async fn main() {}",
        ));
        assert!(
            out.contains("my::rt::runtime::Builder::new_current_thread().enable_all()"),
            "{out}"
        );
        assert!(out.contains("compile_error"), "{out}");
    }
}
