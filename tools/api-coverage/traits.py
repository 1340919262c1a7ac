#!/usr/bin/env python3
"""Which trait impls of Tokio's public types (feature `full`) weft has too,
checked by compiling, for each impl, a function with the impl's own
generics and where clauses that requires the trait of the type:

    fn _t12<T>() where T: Send { fn is<X: ?Sized + Sync>() {} is::<tokio::sync::Mutex<T>>(); }

against weft renamed to `tokio`. Covers the written impls (`impl Clone for
..`, `impl<T> From<..> for ..`) and the auto traits rustdoc works out
(`Send`, `Sync`, `Unpin`, `UnwindSafe`, `RefUnwindSafe`) where Tokio's
type has them; not blanket impls, not `Drop`, not negative impls (weft
may have an auto trait Tokio lacks: every Tokio program still compiles),
and not impls whose types this script cannot write back as Rust (`impl
Trait`, function pointers: listed as not checked). An unmet trait bound
(E0277) at the call marks the impl missing; an error before it (the
impl's generics do not fit weft's type, or a name weft lacks) lists the
impl as not comparable. Run through run.sh, after
coverage.py; appends its section to API.md.
"""
import collections, json, os, re, subprocess, sys

root_dir, doc_json, work = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(doc_json))
index, paths = d["index"], d["paths"]


def get(i):
    return index.get(str(i))


def hidden(item):
    for a in item.get("attrs") or []:
        s = a if isinstance(a, str) else json.dumps(a)
        if "hidden" in s and "doc" in s:
            return True
    return False


# Public path of every public Tokio item (as coverage.py walks them).
public = {}
seen = set()


def walk(mod_id, prefix):
    if mod_id in seen:
        return
    seen.add(mod_id)
    for child in get(mod_id)["inner"]["module"]["items"]:
        it = get(child)
        if it is None or it.get("visibility") != "public" or hidden(it):
            continue
        kind = next(iter(it["inner"]))
        if kind == "use":
            use = it["inner"]["use"]
            target = get(use["id"]) if use.get("id") is not None else None
            if target is None or hidden(target):
                continue
            if use.get("is_glob"):
                if "module" in target["inner"]:
                    walk(use["id"], prefix)
                continue
            add(prefix + [use["name"]], use["id"], target)
            continue
        if it.get("name") is not None:
            add(prefix + [it["name"]], child, it)


def add(path, item_id, item):
    public.setdefault(item_id, "::".join(["tokio"] + path))
    if "module" in item["inner"]:
        walk(item_id, path)


walk(d["root"], [])


class Unwritable(Exception):
    pass


# Items of other crates, by the path of their definition, which may run
# through private modules (`core::panic::unwind_safe::UnwindSafe`): each is
# written as a placeholder and replaced by the shortest public path found
# for it (resolve_foreign).
foreign = {}


def path_of(p):
    pid = p.get("id")
    if pid is not None and pid in public:
        return public[pid]
    if pid is not None and str(pid) in paths:
        summary = paths[str(pid)]
        if summary["path"][0] == "tokio":
            raise Unwritable(f"private Tokio item {'::'.join(summary['path'])}")
        full = tuple(summary["path"])
        return foreign.setdefault(full, f"@@FOREIGN{len(foreign)}@@")
    raise Unwritable(f"unknown path {p.get('path')}")


def args(a):
    if not a:
        return ""
    if "angle_bracketed" not in a:
        raise Unwritable("parenthesized arguments")
    ab = a["angle_bracketed"]
    out = []
    for g in ab.get("args", []):
        if "lifetime" in g:
            out.append(g["lifetime"])
        elif "type" in g:
            out.append(ty(g["type"]))
        elif "const" in g:
            c = g["const"]
            out.append(c.get("expr") or c.get("value") or "_")
        else:
            out.append("_")
    for c in ab.get("constraints", []):
        b = c.get("binding") or {}
        if "equality" in b and "type" in b["equality"]:
            out.append(f"{c['name']} = {ty(b['equality']['type'])}")
        elif "constraint" in b:
            out.append(f"{c['name']}: {bounds(b['constraint'])}")
        else:
            raise Unwritable("constraint")
    return "<" + ", ".join(out) + ">" if out else ""


def rpath(p):
    return path_of(p) + args(p.get("args"))


def ty(t):
    if isinstance(t, str):
        raise Unwritable(t)
    k, v = next(iter(t.items()))
    if k == "resolved_path":
        return rpath(v)
    if k == "generic":
        return v
    if k == "primitive":
        return v
    if k == "tuple":
        return "(" + "".join(ty(x) + ", " for x in v) + ")"
    if k == "slice":
        return f"[{ty(v)}]"
    if k == "array":
        return f"[{ty(v['type'])}; {v['len']}]"
    if k == "borrowed_ref":
        lt = (v.get("lifetime") or "") + " " if v.get("lifetime") else ""
        return f"&{lt}{'mut ' if v['is_mutable'] else ''}{ty(v['type'])}"
    if k == "raw_pointer":
        return f"*{'mut' if v['is_mutable'] else 'const'} {ty(v['type'])}"
    if k == "dyn_trait":
        parts = [poly(x) for x in v["traits"]]
        if v.get("lifetime"):
            parts.append(v["lifetime"])
        return "dyn " + " + ".join(parts)
    if k == "qualified_path":
        if v.get("trait") is None:
            raise Unwritable("inherent associated type")
        return f"<{ty(v['self_type'])} as {rpath(v['trait'])}>::{v['name']}"
    raise Unwritable(k)


def hrtb(params):
    names = [p["name"] for p in params or [] if "lifetime" in p["kind"]]
    return f"for<{', '.join(names)}> " if names else ""


def poly(x):
    return hrtb(x.get("generic_params")) + rpath(x["trait"])


def bound(b):
    if "trait_bound" in b:
        tb = b["trait_bound"]
        mod = {"maybe": "?", "maybe_const": "~const "}.get(tb.get("modifier"), "")
        return mod + hrtb(tb.get("generic_params")) + rpath(tb["trait"])
    if "outlives" in b:
        return b["outlives"]
    raise Unwritable("bound")


def bounds(bs):
    return " + ".join(bound(b) for b in bs)


def generics(g):
    params, preds = [], []
    for p in g.get("params", []):
        kind, v = next(iter(p["kind"].items()))
        if kind == "lifetime":
            params.append(p["name"])
            if v.get("outlives"):
                preds.append(f"{p['name']}: {' + '.join(v['outlives'])}")
        elif kind == "type":
            if v.get("is_synthetic"):
                raise Unwritable("impl Trait parameter")
            params.append(p["name"])
            if v.get("bounds"):
                preds.append(f"{p['name']}: {bounds(v['bounds'])}")
        elif kind == "const":
            params.append(f"const {p['name']}: {ty(v['type'])}")
    for w in g.get("where_predicates", []):
        if "bound_predicate" in w:
            bp = w["bound_predicate"]
            if bp.get("bounds"):
                preds.append(f"{hrtb(bp.get('generic_params'))}{ty(bp['type'])}: {bounds(bp['bounds'])}")
        elif "lifetime_predicate" in w:
            lp = w["lifetime_predicate"]
            if lp.get("outlives"):
                preds.append(f"{lp['lifetime']}: {' + '.join(lp['outlives'])}")
        else:
            raise Unwritable("equality predicate")
    return params, preds


def one_relaxed_sized(preds):
    """`T: ?Sized` once per parameter (rustc refuses it twice)."""
    seen, out = set(), []
    for pred in preds:
        head, _, rest = pred.partition(": ")
        parts = [b for b in rest.split(" + ")]
        # `?Sized` is the only relaxed bound (its path is still a placeholder).
        if any(b.startswith("?") for b in parts):
            if head in seen:
                parts = [b for b in parts if not b.startswith("?")]
            seen.add(head)
        if parts:
            out.append(f"{head}: {' + '.join(parts)}")
    return out


def type_bounds(item, kind, params):
    """The bounds a type's declaration puts on its parameters, for those
    of its parameter names the impl uses too."""
    names = {p.split(":")[0].strip() for p in params}
    out = []
    try:
        ps, preds = generics(item["inner"][kind]["generics"])
    except Unwritable:
        return []
    for pred in preds:
        head = pred.split(":")[0].strip()
        if head in names and "?" not in pred:
            out.append(pred)
    return out


# Every (type, trait) impl to check.
checks = []  # (key, line, trait name)
unchecked = []  # (key, why)
by_type = collections.Counter()
for item_id, tpath in sorted(public.items(), key=lambda kv: kv[1]):
    item = get(item_id)
    kind = next(iter(item["inner"]))
    if kind not in ("struct", "enum", "union"):
        continue
    for impl_id in item["inner"][kind].get("impls", []):
        imp = get(impl_id)
        if imp is None or hidden(imp):
            continue
        inner = imp["inner"]["impl"]
        tr = inner.get("trait")
        if tr is None or inner.get("blanket_impl") is not None or inner.get("is_negative"):
            continue
        tname = tr.get("path", "").split("::")[-1]
        # Not traits a program names (`UnsafeUnpin` is unstable, shown as an
        # auto trait by newer rustdocs).
        if tname in ("Drop", "StructuralPartialEq", "Freeze", "UnsafeUnpin"):
            continue
        try:
            trait = rpath(tr)
            self_ty = ty(inner["for"])
            params, preds = generics(inner["generics"])
        except Unwritable as e:
            if "__Origin" in str(e):
                # pin-project-lite's `Unpin` impl, through its private
                # `__Origin`: Tokio's futures that are `!Unpin` (weft's are
                # `Unpin`, README says so); nothing to check.
                continue
            unchecked.append((f"{tpath}: {tr.get('path')}", str(e)))
            continue
        key = f"impl {trait} for {self_ty}"
        if "'_" in trait + self_ty + " ".join(preds):
            # An elided lifetime of the impl header: one named lifetime.
            trait, self_ty = (re.sub(r"'_\b", "'elided", x) for x in (trait, self_ty))
            preds = [re.sub(r"'_\b", "'elided", x) for x in preds]
            params = ["'elided"] + params
        # The type's own bounds (`AsyncFd<T: AsRawFd>`), which an impl may
        # leave implied.
        for own in type_bounds(item, kind, params):
            if own not in preds:
                preds.append(own)
        preds = one_relaxed_sized(preds)
        n = len(checks)
        gen = f"<{', '.join(params)}>" if params else ""
        args_ = [p.split(":")[0].replace("const ", "").strip() for p in params if not p.startswith("'")]
        targs = f"::<{', '.join(args_)}>" if args_ else ""
        where = f" where {', '.join(preds)}" if preds else ""
        need = ", ".join(preds + [f"{self_ty}: {trait}"])
        # The helper requires the trait; the check calls it under the
        # impl's own bounds. The `PhantomData` argument gives both the
        # bounds the type implies (`T: 'a` for `Foo<'a, T>`).
        line = (f"fn _h{n}{gen}(_: ::core::marker::PhantomData<{self_ty}>) where {need} {{}} "
                f"fn _t{n}{gen}(_: ::core::marker::PhantomData<{self_ty}>){where} {{ "
                f"_h{n}{targs}(::core::marker::PhantomData); }}")
        checks.append((key, line, tname, tpath))


def compile_checks(lines):
    crate = os.path.join(work, "traits")
    os.makedirs(os.path.join(crate, "src"), exist_ok=True)
    with open(os.path.join(crate, "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "traits"\nversion = "0.0.0"\nedition = "2021"\n'
                f'[dependencies]\ntokio = {{ package = "weft", path = "{root_dir}/weft", '
                'features = ["hyper", "tokio-io"] }\nbytes = "1"\nfutures-core = "0.3"\n'
                'futures-sink = "0.3"\n[workspace]\n')
    body = ["#![allow(unused, dead_code, deprecated, bare_trait_objects, unused_lifetimes)]\n",
            "extern crate alloc;\n"]
    line_of = {}
    for key, code, _, _ in lines:
        line_of[len(body) + 1] = (key, code.index("fn _t"), code.index("{ _h"))
        body.append(code + "\n")
    with open(os.path.join(crate, "src", "lib.rs"), "w") as f:
        f.writelines(body)
    out = subprocess.run(["cargo", "check", "--message-format=json", "-q"], cwd=crate,
                         capture_output=True, text=True,
                         env={**os.environ, "CARGO_TARGET_DIR": os.path.join(work, "target")}).stdout
    errors = collections.defaultdict(list)
    for raw in out.splitlines():
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-message":
            continue
        m = msg["message"]
        if m.get("level") != "error":
            continue
        code = (m.get("code") or {}).get("code")
        for span in m.get("spans", []):
            if span.get("is_primary") and span["file_name"].endswith("lib.rs"):
                at = line_of.get(span["line_start"])
                if at:
                    key, check, call = at
                    # In the check's signature: the impl's generics do not
                    # fit weft's type; elsewhere (the helper's bound, the
                    # call) an unmet bound is the impl missing.
                    col = span["column_start"] - 1
                    on_call = not (check <= col < call)
                    errors[key].append((code, on_call, m["message"].split("\n")[0]))
    return errors


def resolve_foreign():
    """A public path of each foreign item: every candidate (the crate, then
    a subset of the definition's modules kept in order, then the name) is
    tried with a `use`, in one build; the first that resolves wins, trying
    those that drop the fewest modules first (the private ones are few:
    `std::os::unix::net::addr::SocketAddr` is `std::os::unix::net::SocketAddr`,
    not `std::net::SocketAddr`)."""
    import itertools
    cands = {}
    lines = []
    for full, ph in foreign.items():
        krate, mods, name = full[0], full[1:-1], full[-1]
        opts = []
        for k in range(len(mods), -1, -1):
            for keep in itertools.combinations(mods, k):
                opts.append("::" + "::".join((krate,) + keep + (name,)))
        cands[ph] = opts
        for o in opts:
            lines.append((f"{ph} {o}", f"use {o} as _;", "", ""))
    crate = os.path.join(work, "foreign")
    os.makedirs(os.path.join(crate, "src"), exist_ok=True)
    with open(os.path.join(crate, "Cargo.toml"), "w") as f:
        f.write('[package]\nname = "foreign"\nversion = "0.0.0"\nedition = "2021"\n'
                'futures-core = "0.3"\n[dependencies]\nbytes = "1"\nfutures-core = "0.3"\n'
                'futures-sink = "0.3"\n[workspace]\n'.replace('futures-core = "0.3"\n[dep', '[dep'))
    body = ["#![allow(unused)]\n", "extern crate alloc;\n"]
    bad = set()
    line_of = {}
    for key, code, _, _ in lines:
        line_of[len(body) + 1] = key
        body.append(code + "\n")
    with open(os.path.join(crate, "src", "lib.rs"), "w") as f:
        f.writelines(body)
    out = subprocess.run(["cargo", "check", "--message-format=json", "-q"], cwd=crate,
                         capture_output=True, text=True,
                         env={**os.environ, "CARGO_TARGET_DIR": os.path.join(work, "target")}).stdout
    for raw in out.splitlines():
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-message" or msg["message"].get("level") != "error":
            continue
        for span in msg["message"].get("spans", []):
            if span["file_name"].endswith("lib.rs") and span["line_start"] in line_of:
                bad.add(line_of[span["line_start"]])
    found = {}
    for ph, opts in cands.items():
        good = [o for o in opts if f"{ph} {o}" not in bad]
        found[ph] = good[0] if good else None
    return found


found = resolve_foreign()
resolved = []
for key, line, tname, tpath in checks:
    holes = set(re.findall(r"@@FOREIGN\d+@@", line))
    if any(found.get(h) is None for h in holes):
        unchecked.append((tpath + ": " + key, "a foreign item with no public path found"))
        continue
    for h in holes:
        line = line.replace(h, found[h])
        key = key.replace(h, found[h])
    resolved.append((key, line, tname, tpath))
checks = resolved
errors = compile_checks(checks)
missing, differs = [], []
for key, _, tname, tpath in checks:
    errs = errors.get(key)
    if not errs:
        continue
    if all(c == "E0277" and on_call for c, on_call, _ in errs):
        missing.append((tpath, key, errs[0][2]))
    else:
        differs.append((tpath, key, "; ".join(f"{c}: {m}" for c, _, m in errs[:2])))

total = len(checks)
present = total - len(missing) - len(differs)
out = ["\n## Trait impls\n\n",
       f"The trait impls of Tokio's public types (written impls, and the auto traits "
       f"`Send`/`Sync`/`Unpin`/`UnwindSafe`/`RefUnwindSafe` where Tokio's type has them; not "
       f"blanket impls), each checked by compiling a function with the impl's generics that "
       f"requires the trait (`tools/api-coverage/traits.py`).\n\n",
       f"**{present} of {total} present, {len(missing)} missing, {len(differs)} not comparable, "
       f"{len(unchecked)} not checked** (types this script cannot write back as Rust).\n\n"]
if missing:
    out.append("### Missing impls\n\n| type | impl | compiler says |\n|---|---|---|\n")
    for tpath, key, why in sorted(missing):
        out.append(f"| `{tpath}` | `{key}` | {why.replace('|', '/').replace('`', chr(39))} |\n")
if differs:
    out.append("\n### Not comparable (weft's type or trait takes other generics, or a name "
               "is missing)\n\n| type | impl | compiler says |\n|---|---|---|\n")
    for tpath, key, why in sorted(differs):
        out.append(f"| `{tpath}` | `{key}` | {why.replace('|', '/').replace('`', chr(39))} |\n")
if unchecked:
    out.append("\n### Not checked\n\n| impl | why |\n|---|---|\n")
    for key, why in sorted(unchecked):
        out.append(f"| `{key}` | {why} |\n")
with open(os.path.join(root_dir, "API.md"), "a") as f:
    f.write("".join(out))
print(f"trait impls: {present} of {total} present, {len(missing)} missing, "
      f"{len(differs)} not comparable, {len(unchecked)} not checked")
