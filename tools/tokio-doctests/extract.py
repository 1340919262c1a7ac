#!/usr/bin/env python3
"""Tokio's documentation examples as a crate of tests: every Rust code
block in the docs of Tokio's public items (from its rustdoc JSON) becomes
a module `src/exN.rs` with a `#[test]` that runs it as rustdoc would:
hidden lines (`# `) kept, the code wrapped in `fn main` unless it has one,
crate attributes hoisted to the top of the module. `ignore` and
`compile_fail` blocks are left out; `no_run` ones are compiled and not
run; `should_panic` ones must panic.

    extract.py TOKIO_JSON OUT_DIR     # writes OUT_DIR/src/*.rs and examples.tsv

examples.tsv lists, per example, its module, how it is checked (run,
build, panic) and where it comes from (the item's path and the block's
number in its docs).
"""
import json, os, re, sys

doc_json, out = sys.argv[1], sys.argv[2]
d = json.load(open(doc_json))
index, paths = d["index"], d["paths"]

RUST_TAGS = {"", "rust", "no_run", "should_panic", "ignore", "compile_fail", "edition2015",
             "edition2018", "edition2021", "edition2024", "test_harness"}


def item_name(item_id, item):
    summary = paths.get(str(item_id))
    if summary:
        return "::".join(summary["path"])
    return item.get("name") or f"#{item_id}"


def blocks(docs):
    """The Rust code blocks of a doc string: (tags, code)."""
    fence = None
    tags, lines = set(), []
    for line in docs.split("\n"):
        stripped = line.strip()
        if fence is None:
            m = re.match(r"^(```+|~~~+)\s*(.*)$", stripped)
            if m:
                fence = m.group(1)
                tags = {t.strip() for t in re.split(r"[,\s]+", m.group(2)) if t.strip()}
                lines = []
            continue
        if stripped.startswith(fence[:3]) and stripped.strip("`~") == "":
            if tags <= RUST_TAGS or not tags:
                yield tags, lines
            fence = None
            continue
        lines.append(line)


def unhide(lines):
    """rustdoc's hidden lines: `# x` is `x`, `#` alone is empty, `##` is `#`."""
    out = []
    for line in lines:
        s = line.lstrip()
        indent = line[: len(line) - len(s)]
        if s.startswith("##"):
            out.append(indent + s[1:])
        elif s == "#":
            out.append("")
        elif s.startswith("# "):
            out.append(indent + s[2:])
        else:
            out.append(line)
    return out


def unwrap_cfg_block(lines):
    """Tokio wraps many examples in `#[cfg(not(target_family = "wasm"))] {
    .. }` (hidden lines), which hides `fn main` from rustdoc's top level:
    rustdoc then wraps the block in a `main` of its own and only builds the
    inner one. The condition holds here, so the block is opened and its
    `main` runs."""
    body = [l for l in lines if l.strip()]
    if (len(body) >= 3 and re.match(r"#\[cfg\(.*(wasm|miri|loom|windows).*\)\]$", body[0].strip())
            and "not(" in body[0] and body[1].strip() == "{" and body[-1].strip() == "}"):
        first = lines.index(body[1])
        last = len(lines) - 1 - lines[::-1].index(body[-1])
        return lines[first + 1:last]
    return lines


def top_level_main(code):
    """Whether `code` has `fn main` outside any braces."""
    depth = 0
    for m in re.finditer(r"[{}]|\bfn\s+main\s*\(", code):
        tok = m.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
        elif depth == 0:
            return True
    return False


def module_source(code_lines, mode):
    code = "\n".join(unwrap_cfg_block(code_lines))
    attrs, body = [], []
    for line in code.split("\n"):
        if line.strip().startswith("#![") and not body:
            attrs.append(line.strip())
        else:
            body.append(line)
    # Crate-level attributes that mean nothing in a module are dropped.
    attrs = [a for a in attrs if a.startswith("#![allow") or a.startswith("#![warn")
             or a.startswith("#![deny")]
    code = "\n".join(body)
    has_main = top_level_main(code)
    if not has_main and code.rstrip().endswith("(())"):
        # rustdoc's wrapping of a block that ends in `Ok::<(), E>(())` (so
        # that it may use `?`).
        code = ("fn main() {\nfn _inner() -> ::core::result::Result<(), impl ::core::fmt::Debug> {\n"
                + code + "\n}\n_inner().unwrap()\n}")
    elif not has_main:
        code = "fn main() {\n" + code + "\n}"
    returns = re.search(r"\bfn\s+main\s*\(\s*\)\s*->", code) is not None
    call = "main().unwrap();" if returns else "main();"
    test = ""
    if mode == "run":
        test = f"\n#[test]\nfn doc() {{\n    {call}\n}}\n"
    elif mode == "panic":
        test = f"\n#[test]\n#[should_panic]\nfn doc() {{\n    {call}\n}}\n"
    head = "\n".join(attrs) + ("\n" if attrs else "")
    return (head + "#![allow(unused, dead_code, unused_imports, unused_must_use, deprecated)]\n"
            "#![allow(clippy::all)]\n" + code + "\n" + test)


os.makedirs(os.path.join(out, "src"), exist_ok=True)
for f in os.listdir(os.path.join(out, "src")):
    os.remove(os.path.join(out, "src", f))
rows, mods = [], []
for item_id, item in sorted(index.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0):
    if item.get("crate_id") != 0 or not item.get("docs"):
        continue
    where = item_name(item_id, item)
    for k, (tags, code) in enumerate(blocks(item["docs"])):
        if "ignore" in tags or "compile_fail" in tags:
            continue
        mode = "build" if "no_run" in tags else "panic" if "should_panic" in tags else "run"
        n = len(mods)
        name = f"ex{n}"
        with open(os.path.join(out, "src", name + ".rs"), "w") as f:
            f.write(module_source(unhide(code), mode))
        mods.append(name)
        rows.append(f"{name}\t{mode}\t{where}#{k}")
with open(os.path.join(out, "src", "lib.rs"), "w") as f:
    f.write("".join(f"mod {m};\n" for m in mods))
with open(os.path.join(out, "examples.tsv"), "w") as f:
    f.write("\n".join(rows) + "\n")
print(f"{len(mods)} examples")
