"""Tokio's rustdoc JSON written back as Rust, for the checks of traits.py
and sigs.py: the public path of each Tokio item, types, bounds and
generics as source text (an item of another crate becomes a placeholder
that `resolve_foreign` replaces by a public path), and one crate that
compiles many one-line checks against weft renamed to `tokio` and
returns each line's errors.
"""
import collections, itertools, json, os, re, subprocess


def load(doc_json):
    """Read Tokio's rustdoc JSON and index its public items."""
    global d, index, paths
    d = json.load(open(doc_json))
    index, paths = d["index"], d["paths"]
    walk(d["root"], [])
    return d


def get(i):
    return index.get(str(i))


def hidden(item):
    for a in item.get("attrs") or []:
        s = a if isinstance(a, str) else json.dumps(a)
        if "hidden" in s and "doc" in s:
            return True
    return False


# Public path of every public Tokio item (as coverage.py walks them).
public = {}      # item id -> its public path
items = {}       # public path -> (rustdoc kind, item id), first path wins
seen = set()
d = index = paths = None


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
    items.setdefault("::".join(["tokio"] + path), (next(iter(item["inner"])), item_id))
    if "module" in item["inner"]:
        walk(item_id, path)




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
    if "parenthesized" in a:
        # `Fn(A, B) -> C`
        p = a["parenthesized"]
        out = f" -> {ty(p['output'])}" if p.get("output") else ""
        return "(" + ", ".join(ty(t) for t in p["inputs"]) + ")" + out
    if "angle_bracketed" not in a:
        raise Unwritable("generic arguments of an unknown shape")
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
    if k == "impl_trait":
        return "impl " + bounds(v)
    if k == "function_pointer":
        sig = v["sig"]
        ins = ", ".join(ty(t) for _, t in sig["inputs"])
        out = f" -> {ty(sig['output'])}" if sig.get("output") else ""
        unsafe = "unsafe " if v.get("header", {}).get("is_unsafe") else ""
        return f"{hrtb(v.get('generic_params'))}{unsafe}fn({ins}){out}"
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


def generics(g, synthetic_ok=False):
    """The parameters and predicates of generics `g`, as text. A parameter
    rustdoc made for an argument's `impl Trait` is left out where
    `synthetic_ok` (the argument is written as `impl Trait` itself), and is
    unwritable otherwise."""
    params, preds = [], []
    for p in g.get("params", []):
        kind, v = next(iter(p["kind"].items()))
        if kind == "lifetime":
            params.append(p["name"])
            if v.get("outlives"):
                preds.append(f"{p['name']}: {' + '.join(v['outlives'])}")
        elif kind == "type":
            if v.get("is_synthetic"):
                if synthetic_ok:
                    continue
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


def compile_checks(name, lines, root_dir, work):
    """Build `lines` (key, code, sig_start, body_start) in one crate; for
    each key, its errors as (code, in_signature, message): `in_signature`
    when the error lies in the check's signature (from `sig_start` up to
    `body_start`), which means the check could not be stated, not that
    weft differs."""
    crate = os.path.join(work, name)
    os.makedirs(os.path.join(crate, "src"), exist_ok=True)
    with open(os.path.join(crate, "Cargo.toml"), "w") as f:
        f.write(f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2021"\n'
                f'[dependencies]\ntokio = {{ package = "weft", path = "{root_dir}/weft", '
                'features = ["hyper", "tokio-io"] }\nbytes = "1"\nfutures-core = "0.3"\n'
                'futures-sink = "0.3"\n[workspace]\n')
    body = ["#![allow(unused, dead_code, deprecated, bare_trait_objects, unused_lifetimes)]\n",
            "extern crate alloc;\n"]
    line_of = {}
    for key, code, sig, start in lines:
        line_of[len(body) + 1] = (key, sig, start)
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
                    key, sig, start = at
                    col = span["column_start"] - 1
                    errors[key].append((code, sig <= col < start, m["message"].split("\n")[0]))
    return errors


def resolve_foreign(root_dir, work):
    """A public path of each foreign item: every candidate (the crate, then
    a subset of the definition's modules kept in order, then the name) is
    tried with a `use`, in one build; the first that resolves wins, trying
    those that drop the fewest modules first (the private ones are few:
    `std::os::unix::net::addr::SocketAddr` is `std::os::unix::net::SocketAddr`,
    not `std::net::SocketAddr`)."""
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
            lines.append((f"{ph} {o}", f"use {o} as _;"))
    bad = set(compile_checks("foreign", [(k, c, 0, 0) for k, c in lines], root_dir, work))
    found = {}
    for ph, opts in cands.items():
        good = [o for o in opts if f"{ph} {o}" not in bad]
        found[ph] = good[0] if good else None
    return found




def fill_foreign(checks, found):
    """`checks` (key, code, ...) with their placeholders replaced; the
    keys of those that name a foreign item with no public path."""
    done, lost = [], []
    for check in checks:
        key, code = check[0], check[1]
        holes = set(re.findall(r"@@FOREIGN\d+@@", code))
        if any(found.get(h) is None for h in holes):
            lost.append(check)
            continue
        for h in holes:
            code = code.replace(h, found[h])
            key = key.replace(h, found[h])
        done.append((key, code) + tuple(check[2:]))
    return done, lost


def cell(text):
    """`text` safe in a Markdown table cell."""
    return text.replace("|", "/").replace("`", "'")


def md_table(title, header, rows):
    """A Markdown section: `### title`, then a table of `rows` (tuples of
    cells; the first ones, up to the last, are code)."""
    if not rows:
        return ""
    out = [f"\n### {title}\n\n| {' | '.join(header)} |\n|{'---|' * len(header)}\n"]
    for row in sorted(rows):
        code = [f"`{c}`" for c in row[:-1]]
        out.append(f"| {' | '.join(code + [cell(row[-1])])} |\n")
    return "".join(out)
