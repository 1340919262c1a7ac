#!/usr/bin/env python3
"""Whether weft's functions and methods take what Tokio's take and give
back what Tokio's give back: for every public free function, inherent
method and trait method of Tokio (feature `full`; a trait's methods are
called on a generic implementor), a function with Tokio's signature (its
generics, where clauses and argument types) calls weft's item with its
arguments and returns the result as Tokio's return type:

    async fn _s7<T>(a0: &tokio::sync::Mutex<T>) -> tokio::sync::MutexGuard<'_, T>
    where T: ?Sized { <tokio::sync::Mutex<T>>::lock(a0).await }

compiled against weft renamed to `tokio`. An error in the body means a
Tokio caller of that shape would not compile on weft (another receiver,
argument type or bound, return type, or a missing `async`); an error in
the check's own signature means this script could not state it (listed
apart). Return types holding `impl Trait` are not compared; arguments
written `impl Trait` are passed as such. Run through run.sh after
traits.py; appends its section to API.md.
"""
import copy, json, os, re, sys
from render import (Unwritable, compile_checks, fill_foreign, generics, get, hidden, load,
                    md_table, one_relaxed_sized, public, resolve_foreign, ty)

root_dir, doc_json, work = sys.argv[1], sys.argv[2], sys.argv[3]
load(doc_json)


def self_sub(text, self_ty):
    """`Self` (a generic to rustdoc) as the impl's type."""
    return re.sub(r"\bSelf\b", self_ty, text)


def name_self_lifetime(sig):
    """`sig` with the elided lifetimes of `self`'s type (`&self`,
    `Pin<&mut Self>`) and of the output as `'__self`."""
    sig = copy.deepcopy(sig)

    def fill(t):
        if isinstance(t, dict):
            if "borrowed_ref" in t and t["borrowed_ref"].get("lifetime") is None:
                t["borrowed_ref"]["lifetime"] = "'__self"
            if "lifetime" in t and t["lifetime"] == "'_":
                t["lifetime"] = "'__self"
            for v in t.values():
                fill(v)
        elif isinstance(t, list):
            for v in t:
                fill(v)

    fill(sig["inputs"][0][1])
    if sig.get("output"):
        fill(sig["output"])
    return sig


checks = []      # (key, code, sig_start, body_start)
unchecked = []   # (key, why)


def add_check(key, call, fn_item, impl_params=(), impl_preds=(), self_ty=None):
    """A check that calls `call` (a path) with `fn_item`'s arguments."""
    f = fn_item["inner"]["function"]
    sig, header = f["sig"], f.get("header", {})
    extra = []
    first = sig["inputs"][0] if sig["inputs"] else None
    if first and first[0] == "self" and '"lifetime": null' in json.dumps(first[1]):
        # `&self` or `self: Pin<&mut Self>`: elision gives the output
        # `self`'s lifetime; a free function has no `self`, so the lifetime
        # is written out.
        sig = name_self_lifetime(sig)
        extra = ["'__self"]
    try:
        params, preds = generics(f["generics"], synthetic_ok=True)
        # Lifetimes first, as Rust wants them.
        params = sorted(extra + list(impl_params) + params, key=lambda p: not p.startswith("'"))
        preds = one_relaxed_sized(list(impl_preds) + preds)
        inputs = [ty(t) for _, t in sig["inputs"]]
    except Unwritable as e:
        unchecked.append((key, str(e)))
        return
    try:
        out = ty(sig["output"]) if sig.get("output") else "()"
        if "impl " in out:
            out = None
    except Unwritable:
        out = None
    if self_ty is not None:
        inputs = [self_sub(t, self_ty) for t in inputs]
        preds = [self_sub(p, self_ty) for p in preds]
        out = self_sub(out, self_ty) if out else None
    n = len(checks)
    gen = f"<{', '.join(params)}>" if params else ""
    where = f" where {', '.join(preds)}" if preds else ""
    args = ", ".join(f"a{i}: {t}" for i, t in enumerate(inputs))
    is_async = header.get("is_async")
    expr = f"{call}({', '.join(f'a{i}' for i in range(len(inputs)))})"
    if header.get("is_unsafe"):
        expr = f"unsafe {{ {expr} }}"
    if is_async:
        expr += ".await"
    # The check returns Tokio's type (so its signature implies the bounds
    # Tokio's does, `U: 'a` for a guard of `U`), unless it holds `impl
    # Trait`.
    ret = f" -> {out}" if out else ""
    body = f"{{ {expr} }}" if out else f"{{ let _r = {expr}; }}"
    head = f"{'async ' if is_async else ''}fn _s{n}{gen}({args}){ret}{where} "
    code = head + body
    checks.append((key, code, 0, len(head)))


for item_id, path in sorted(public.items(), key=lambda kv: kv[1]):
    item = get(item_id)
    kind = next(iter(item["inner"]))
    if kind == "function":
        if "const " in path:
            continue
        add_check(path, path, item)
        continue
    if kind not in ("struct", "enum", "union"):
        continue
    for impl_id in item["inner"][kind].get("impls", []):
        imp = get(impl_id)
        if imp is None or hidden(imp):
            continue
        inner = imp["inner"]["impl"]
        if inner.get("trait") is not None or inner.get("blanket_impl") is not None:
            continue
        try:
            impl_params, impl_preds = generics(inner["generics"])
            self_ty = ty(inner["for"])
        except Unwritable as e:
            unchecked.append((path, str(e)))
            continue
        if "'_" in self_ty:
            self_ty = re.sub(r"'_\b", "'elided", self_ty)
            impl_params = ["'elided"] + impl_params
        for m in inner["items"]:
            mi = get(m)
            if (mi is None or mi.get("visibility") != "public" or hidden(mi)
                    or "function" not in mi["inner"]):
                continue
            name = mi["name"]
            add_check(f"{path}::{name}", f"<{self_ty}>::{name}", mi, impl_params, impl_preds,
                      self_ty)

# The methods of Tokio's public traits (`AsyncReadExt::read_u32`,
# `AsyncRead::poll_read`, ...), called on a generic implementor.
for item_id, path in sorted(public.items(), key=lambda kv: kv[1]):
    item = get(item_id)
    if "trait" not in item["inner"]:
        continue
    tr = item["inner"]["trait"]
    try:
        t_params, t_preds = generics(tr["generics"])
    except Unwritable as e:
        unchecked.append((path, str(e)))
        continue
    targs = [p.split(":")[0].replace("const ", "").strip() for p in t_params]
    trait_ref = path + (f"<{', '.join(targs)}>" if targs else "")
    implementor = "__S"
    for m in tr.get("items", []):
        mi = get(m)
        if mi is None or hidden(mi) or "function" not in mi["inner"]:
            continue
        add_check(f"{path}::{mi['name']}", f"<{implementor} as {trait_ref}>::{mi['name']}", mi,
                  t_params + [implementor], t_preds + [f"{implementor}: {trait_ref} + ?Sized"],
                  implementor)

checks, lost = fill_foreign(checks, resolve_foreign(root_dir, work))
for key, *_ in lost:
    unchecked.append((key, "a foreign item with no public path found"))
errors = compile_checks("sigs", checks, root_dir, work)
differs, unstated = [], []
for key, *_ in checks:
    errs = errors.get(key)
    if not errs:
        continue
    text = "; ".join(f"{c}: {m}" for c, _, m in errs[:2])
    if any(in_sig for _, in_sig, _ in errs):
        unstated.append((key, text))
    else:
        differs.append((key, text))

total = len(checks)
same = total - len(differs) - len(unstated)


out = ["\n## Signatures\n\n",
       "Every public free function and inherent method of Tokio, called the way Tokio's "
       "signature allows (its generics, bounds and argument types) and its result bound to "
       "Tokio's return type (`tools/api-coverage/sigs.py`); return types holding `impl "
       "Trait` are not compared.\n\n",
       f"**{same} of {total} take and return what Tokio's do, {len(differs)} differ, "
       f"{len(unstated)} could not be stated, {len(unchecked)} not checked.**\n\n"]
out.append(md_table("Differ", ["item", "compiler says"], differs))
out.append(md_table("Could not be stated", ["item", "compiler says"], unstated))
out.append(md_table("Not checked", ["item", "why"], unchecked))
with open(os.path.join(root_dir, "API.md"), "a") as f:
    f.write("".join(out))
print(f"signatures: {same} of {total} the same, {len(differs)} differ, "
      f"{len(unstated)} could not be stated, {len(unchecked)} not checked")
