#!/usr/bin/env python3
"""Compare run.sh's report with expected.txt and print the summary.

report lines:   <file> ok | build-error | timeout | fail <test>,<test>,...
expected lines: <file> build-error|timeout|fail [<test>,...]   # why
A file not in expected.txt is expected to pass whole. Exit status 1 when
anything differs (a new failure, or an expected one that now passes:
expected.txt is then out of date).
"""
import sys


def parse(path, comments):
    out = {}
    for raw in open(path):
        line = raw.split("#", 1)[0].strip() if comments else raw.strip()
        if not line:
            continue
        parts = line.split()
        name, status = parts[0], parts[1]
        tests = set(parts[2].split(",")) if len(parts) > 2 and status == "fail" else set()
        out[name] = (status, tests)
    return out


def main():
    report = parse(sys.argv[1], comments=False)
    expected = parse(sys.argv[2], comments=True)
    partial = "--partial" in sys.argv
    problems = []
    counts = {"ok": 0, "fail": 0, "build-error": 0, "timeout": 0}
    for name, (status, tests) in sorted(report.items()):
        counts[status] = counts.get(status, 0) + 1
        want = expected.get(name, ("ok", set()))
        if (status, tests) != want:
            problems.append(f"{name}: expected {want[0]} {','.join(sorted(want[1]))}".rstrip()
                            + f", got {status} {','.join(sorted(tests))}".rstrip())
    if not partial:
        for name in sorted(set(expected) - set(report)):
            problems.append(f"{name}: in expected.txt but not in Tokio's tests")
    total = len(report)
    print(f"Tokio's test files: {total}; whole files passing: {counts['ok']}; "
          f"with failing tests: {counts['fail']}; not building: {counts['build-error']}; "
          f"timed out: {counts['timeout']}")
    failing_tests = sum(len(t) for s, t in report.values() if s == "fail")
    print(f"failing tests in the files that build: {failing_tests}")
    if problems:
        print("differences from expected.txt:")
        for p in problems:
            print("  " + p)
        sys.exit(1)
    print("as expected.txt says")


main()
