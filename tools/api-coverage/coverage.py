#!/usr/bin/env python3
"""Which public items of Tokio 1.x (feature `full`) exist in weft at the
same path, checked by compiling a use of each against weft renamed to
`tokio`. Writes API.md at the repository root. Run through run.sh.

Items: modules, types, traits, functions, macros, constants and type
aliases reachable from `tokio::` through public modules and re-exports,
plus the inherent methods and associated functions of Tokio's public types.
A path is checked with `use tokio::path as _;` (macros: `use
tokio::name;`), a method with a path expression `let _ = Type::method;`.
A "not found" error (E0412, E0422, E0425, E0432, E0433, E0599, E0603,
E0423) marks it missing; any other outcome (including "type annotations
needed" for generic items) counts as present. What this does not see:
signatures that differ (a method of a different shape compiles as
present), and items behind `tokio_unstable` (not built). Trait impls are
traits.py's, which run.sh runs next.
"""
import collections, os, re, sys, datetime
import render
from render import compile_checks, get, hidden, load

root_dir, doc_json, work = sys.argv[1], sys.argv[2], sys.argv[3]
d = load(doc_json)
crate_version = d.get("crate_version")

KIND_OF = {"module": "mod", "struct": "struct", "enum": "enum", "trait": "trait",
           "function": "fn", "macro": "macro", "proc_macro": "macro", "constant": "const",
           "type_alias": "type", "static": "static", "union": "union"}

# path -> (kind, id), for the kinds listed
items = {path: (KIND_OF[kind], item_id) for path, (kind, item_id) in render.items.items()
         if kind in KIND_OF}

# Inherent methods of public types.
methods = {}
for path, (kind, item_id) in list(items.items()):
    if kind not in ("struct", "enum", "union"):
        continue
    it = get(item_id)
    impls = it["inner"][next(iter(it["inner"]))].get("impls", [])
    for impl_id in impls:
        imp = get(impl_id)
        if imp is None:
            continue
        inner = imp["inner"]["impl"]
        if inner.get("trait") is not None or inner.get("blanket_impl") is not None:
            continue
        for m in inner["items"]:
            mi = get(m)
            if mi is None or mi.get("visibility") != "public" or hidden(mi) or mi.get("name") is None:
                continue
            if "function" in mi["inner"]:
                methods.setdefault(f"{path}::{mi['name']}", path)

MISSING = {"E0412", "E0422", "E0425", "E0432", "E0433", "E0599", "E0603", "E0423", "E0405", "E0574"}

def check(lines, name):
    """The keys of `lines` (key, code) whose line fails with a "not found"
    error, and its message."""
    errors = compile_checks(name, [(k, c, 0, 0) for k, c in lines], root_dir, work)
    missing = {}
    for key, errs in errors.items():
        for code, _, message in errs:
            if code in MISSING:
                missing[key] = message
    return missing

def path_line(key, kind):
    if kind == "macro":
        return f"use {key};"
    return f"use {key} as _;"

path_lines = [(k, path_line(k, kind)) for k, (kind, _) in sorted(items.items())]
missing_paths = check(path_lines, "paths")
method_lines = []
for key, owner in sorted(methods.items()):
    if owner in missing_paths:
        continue
    method_lines.append((key, f"fn _m{len(method_lines)}() {{ let _ = {key}; }}"))
missing_methods = check(method_lines, "methods")

# Why an item is missing, where we know; the rest is simply not written
# yet (issue 14 tracks the whole surface).
REASONS = [
    (r"Mapped|::map$|::try_map$|downgrade_map|into_mapped|::rwlock$",
     "mapped lock guards not written yet (issue 14)"),
    (r"^tokio::net::(tcp|unix)::(Owned)?(Read|Write)Half::",
     "split halves lack Tokio's readiness/vectored/peek methods (issue 14)"),
    (r"UnixSocket|bind_addr|connect_addr|as_abstract_name",
     "Unix socket builder and SocketAddr-based binds not written yet (issue 14)"),
    (r"try_read_buf", "bytes-based try_read_buf on streams not written yet (issue 14)"),
    (r"^tokio::runtime::(Builder::name|Handle::(id|name)|Id|worker_index|is_rt_shutdown_err)",
     "runtime naming, ids and worker_index not written yet (issue 14)"),
    (r"^tokio::runtime::Builder::max_io_events",
     "weft's I/O driver has no per-tick event cap to set yet"),
    (r"(strong|weak)_count|WeakSender|downgrade$|same_channel|sender_count|::closed$|is_closed",
     "channel handle counting and weak senders not written yet (issue 14)"),
    (r"^tokio::sync::futures::", "the Notified futures are not public at this path yet (issue 14)"),
    (r"^tokio::task::coop::", "coop's public helpers (cooperative, poll_proceed) not exported yet (issue 14)"),
    (r"^tokio::time::error::", "time's error types not written yet (issue 14)"),
    (r"^tokio::io::unix::AsyncFd", "AsyncFd's registration-error and mut-guard extras not written yet (issue 14)"),
    (r"^tokio::fs::(FileTimes|File::set_)", "file times need Rust's FileTimes wrapper (issue 14)"),
    (r"_with_id$|spawn_blocking_on|LocalSet::id|LocalKey::try_get",
     "task id variants of JoinSet/LocalSet not written yet (issue 14)"),
    (r"blocking_recv_many", "blocking_recv_many not written yet (issue 14)"),
]


def reason_for(key):
    for pattern, why in REASONS:
        if re.search(pattern, key):
            return why
    return "not written yet (issue 14)"

def module_of(key):
    parts = key.split("::")
    # group by the first two segments: tokio::net, tokio::sync::mpsc, ...
    if len(parts) <= 2:
        return "tokio"
    mod = parts[:2]
    p = "::".join(parts[:3])
    if p in items and items[p][0] == "mod":
        mod = parts[:3]
    return "::".join(mod)

rows = collections.defaultdict(list)
for key, (kind, _) in items.items():
    if kind == "mod":
        continue
    status = "missing" if key in missing_paths else "present"
    rows[module_of(key)].append((key, kind, status, missing_paths.get(key, "")))
for key, owner in methods.items():
    if owner in missing_paths:
        status, why = "missing", f"its type `{owner}` is missing"
    else:
        status = "missing" if key in missing_methods else "present"
        why = missing_methods.get(key, "")
    rows[module_of(owner)].append((key, "method", status, why))

total = sum(len(v) for v in rows.values())
present = sum(1 for v in rows.values() for r in v if r[2] == "present")
out = []
out.append("# Tokio API coverage\n\n")
out.append(f"Every public item of Tokio {crate_version} with feature `full` (modules' items, "
           "macros, and the inherent methods of its types), checked by compiling a use of "
           "each against weft renamed to `tokio` (`tools/api-coverage/run.sh`, "
           f"{datetime.date.today().isoformat()}). Items behind `tokio_unstable` are not "
           "listed. A present item may still differ in signature or behaviour; see "
           "README's \"Differences from Tokio\".\n\n")
out.append(f"**{present} of {total} present, {total - present} missing.**\n\n")
out.append("| module | present | missing |\n|---|---:|---:|\n")
for mod in sorted(rows):
    v = rows[mod]
    p = sum(1 for r in v if r[2] == "present")
    out.append(f"| `{mod}` | {p} | {len(v) - p} |\n")
out.append("\n## Missing items\n\n| item | kind | reason | compiler says |\n|---|---|---|---|\n")
for mod in sorted(rows):
    for key, kind, status, why in sorted(rows[mod]):
        if status == "missing":
            why = why.replace("|", "\\|").replace("`", "'")
            out.append(f"| `{key}` | {kind} | {reason_for(key)} | {why} |\n")
out.append("\n## Present items\n\n")
for mod in sorted(rows):
    names = sorted(k[len(mod) + 2:] or k for k, _, s, _ in rows[mod] if s == "present")
    if names:
        out.append(f"- `{mod}`: " + ", ".join(f"`{n}`" for n in names) + "\n")
open(os.path.join(root_dir, "API.md"), "w").write("".join(out))
print(f"{present} of {total} present; wrote API.md")
