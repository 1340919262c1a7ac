#!/usr/bin/env python3
"""Build and run the example crates run.sh prepared (WORK/weft, WORK/tokio)
and compare them: writes WORK/report.txt and prints its summary.

Per side, a module whose code does not compile is left out (its first
error kept) and the crate built again, until the rest builds. Then every
`run` example's test runs alone (`--exact`, 60 s limit) in a scratch
directory of its own. The report lists, per example, both outcomes, and
first the examples that build or pass on Tokio and not on weft.
"""
import collections, json, os, re, shutil, subprocess, sys

work = sys.argv[1]
examples = {}
for line in open(os.path.join(work, "weft", "examples.tsv")):
    if line.strip():
        name, mode, where = line.rstrip("\n").split("\t")
        examples[name] = (mode, where)


def build(side):
    """Build the side's crate, leaving out what does not compile; its test
    binary and the modules left out, with their first error."""
    crate = os.path.join(work, side)
    left_out = {}
    env = {**os.environ, "CARGO_TARGET_DIR": os.path.join(crate, "target")}
    for _ in range(10):
        with open(os.path.join(crate, "src", "lib.rs"), "w") as f:
            f.write("".join(f"mod {m};\n" for m in examples if m not in left_out))
        run = subprocess.run(["cargo", "test", "--lib", "--no-run", "--message-format=json"],
                             cwd=crate, capture_output=True, text=True, env=env)
        exe, new = None, {}
        for raw in run.stdout.splitlines():
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
                exe = msg["executable"]
            if msg.get("reason") != "compiler-message" or msg["message"].get("level") != "error":
                continue
            m = msg["message"]
            for span in m.get("spans", []):
                hit = re.search(r"src/(ex\d+)\.rs$", span["file_name"])
                if hit and hit.group(1) not in left_out:
                    new.setdefault(hit.group(1), m["message"].split("\n")[0])
                    break
        if exe and run.returncode == 0:
            return exe, left_out
        if not new:
            sys.exit(f"{side}: the build fails where no example is to blame:\n{run.stderr[-3000:]}")
        left_out.update(new)
    sys.exit(f"{side}: still failing after 10 rounds")


def run_all(side, exe, left_out):
    outcome = {}
    scratch = os.path.join(work, side, "scratch")
    for name, (mode, _) in examples.items():
        if name in left_out:
            outcome[name] = "does not build: " + left_out[name]
            continue
        if mode == "build":
            outcome[name] = "builds"
            continue
        cwd = os.path.join(scratch, name)
        shutil.rmtree(cwd, ignore_errors=True)
        os.makedirs(cwd)
        try:
            r = subprocess.run([exe, "--exact", f"{name}::doc", "--test-threads=1"], cwd=cwd,
                               capture_output=True, text=True, timeout=60)
            if r.returncode == 0 and "1 passed" in r.stdout:
                outcome[name] = "passes"
            else:
                text = r.stdout + r.stderr
                why = re.search(r"panicked at [^\n]*\n([^\n]*)", text)
                outcome[name] = "fails: " + (why.group(1) if why else f"exit {r.returncode}")
        except subprocess.TimeoutExpired:
            outcome[name] = "times out"
        shutil.rmtree(cwd, ignore_errors=True)
    return outcome


results = {}
for side in ("tokio", "weft"):
    exe, left_out = build(side)
    results[side] = run_all(side, exe, left_out)

good = ("passes", "builds")
worse = [n for n in examples
         if results["tokio"][n] in good and results["weft"][n] not in good]
better = [n for n in examples
          if results["weft"][n] in good and results["tokio"][n] not in good]
lines = []
for side in ("tokio", "weft"):
    counts = collections.Counter(o.split(":")[0] for o in results[side].values())
    lines.append(f"{side}: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
lines.append(f"good on Tokio, not on weft: {len(worse)}")
for n in worse:
    lines.append(f"  {n} ({examples[n][1]}): tokio {results['tokio'][n]}; weft {results['weft'][n]}")
lines.append(f"good on weft, not on Tokio: {len(better)}")
for n in better:
    lines.append(f"  {n} ({examples[n][1]}): tokio {results['tokio'][n]}; weft {results['weft'][n]}")
lines.append("")
lines.append("every example: name, mode, source, Tokio, weft")
for n, (mode, where) in examples.items():
    lines.append(f"{n}\t{mode}\t{where}\t{results['tokio'][n]}\t{results['weft'][n]}")
with open(os.path.join(work, "report.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines[: 4 + len(worse) + len(better)]))
