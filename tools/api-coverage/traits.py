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
import os, re, sys
from render import (Unwritable, compile_checks, fill_foreign, generics, get, hidden, load,
                    md_table, one_relaxed_sized, public, resolve_foreign, rpath, ty,
                    type_bounds)
import render

root_dir, doc_json, work = sys.argv[1], sys.argv[2], sys.argv[3]
load(doc_json)

# Every (type, trait) impl to check.
checks = []  # (key, line, trait name)
unchecked = []  # (key, why)
def impls_to_check():
    """(owner path, owner item or None, impl id): the impls of Tokio's
    public types, then those of its public traits for other types
    (`AsyncRead for &[u8]`, `AsyncWrite for Vec<u8>`, ...), each once."""
    seen_impls = set()
    for item_id, tpath in sorted(public.items(), key=lambda kv: kv[1]):
        item = get(item_id)
        kind = next(iter(item["inner"]))
        if kind in ("struct", "enum", "union"):
            ids, owner = item["inner"][kind].get("impls", []), item
        elif kind == "trait":
            ids, owner = item["inner"]["trait"].get("implementations", []), None
        else:
            continue
        for impl_id in ids:
            if impl_id not in seen_impls:
                seen_impls.add(impl_id)
                yield tpath, owner, impl_id


for tpath, item, impl_id in impls_to_check():
    if True:
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
        elided = re.compile(r"'_\b|&(?!')")
        if elided.search(trait + self_ty + " ".join(preds)):
            # The elided lifetimes of the impl header (`'_`, `&T`): one
            # named lifetime.
            name = lambda x: elided.sub(lambda m: "'elided" if m.group(0) == "'_" else "&'elided ", x)
            trait, self_ty = name(trait), name(self_ty)
            preds = [name(x) for x in preds]
            params = ["'elided"] + params
        # The type's own bounds (`AsyncFd<T: AsRawFd>`), which an impl may
        # leave implied.
        owner_bounds = [] if item is None else type_bounds(
            item, next(iter(item["inner"])), params)
        for own in owner_bounds:
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
        checks.append((key, line, line.index(f"fn _t{n}"), line.index(f"{{ _h{n}"), tpath))



checks, lost = fill_foreign(checks, resolve_foreign(root_dir, work))
for key, _, _, _, tpath in lost:
    unchecked.append((f"{tpath}: {key}", "a foreign item with no public path found"))
errors = compile_checks("traits", [c[:4] for c in checks], root_dir, work)
missing, differs = [], []
for key, _, _, _, tpath in checks:
    errs = errors.get(key)
    if not errs:
        continue
    # An unmet bound outside the check's signature (the helper's bound, or
    # the call) is the impl missing; anything else, not comparable.
    if all(c == "E0277" and not in_sig for c, in_sig, _ in errs):
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
out.append(md_table("Missing impls", ["type", "impl", "compiler says"], missing))
out.append(md_table("Not comparable (weft's type or trait takes other generics, or a name "
                    "is missing)", ["type", "impl", "compiler says"], differs))
out.append(md_table("Not checked", ["impl", "why"], unchecked))
with open(os.path.join(root_dir, "API.md"), "a") as f:
    f.write("".join(out))
print(f"trait impls: {present} of {total} present, {len(missing)} missing, "
      f"{len(differs)} not comparable, {len(unchecked)} not checked")
