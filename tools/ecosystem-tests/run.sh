#!/usr/bin/env bash
# The test suites of crates built on Tokio's public API (their crates.io
# packages, tests/ included) run against weft: each package is copied, its
# `tokio` patched to weft-tokio, and every test binary run with a 120 s
# limit; every test must pass. They test Tokio hard (tokio-util's
# DelayQueue found that weft's `Sleep::reset` dropped its waker). Needs
# network access once (crates.io). .ci/run runs three (about 2 minutes);
# all 65 take about two hours from cold.
#
#   tools/ecosystem-tests/run.sh                 # every package; exit 0 when every test passes
#   tools/ecosystem-tests/run.sh tokio-util tower  # only these
#   DRIVERS=epoll tools/ecosystem-tests/run.sh     # on one I/O driver (default: auto epoll)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
work="$root/target/ecosystem-tests"
# The I/O drivers every test binary runs on (WEFT_IO_DRIVER values).
DRIVERS=${DRIVERS:-auto epoll}
mkdir -p "$work/fetch/src"
# package | version | the cargo features its tests need (and `--test
# NAME` to run only those targets) | tests to skip (and why) |
# dev-dependencies its tests use that its published Cargo.toml lacks (`\n`
# between two) |
# environment (`KEY=VALUE ...`, paths relative to the package) for its
# build and its tests
packages=(
  "tokio-util|0.7.20|--features full|"
  "tokio-stream|0.1.19|--features full|"
  "tokio-test|0.4.6||"
  "tower|0.5.3|--features full|"
  # resolves hyper.rs through DNS, which this host (and CI) does not have
  "hyper-util|0.1.21|--features full|--skip test_socks_v5_with_locally_resolved_domain_works"
  "actix-rt|2.15.0||"
  "actix-server|2.10.0||"
  # its tests use tokio-test, which 0.3.6's published manifest does not list
  # tests/ui are trybuild snapshots of rustc's diagnostics, which change
  # with the compiler (the `test` binary, one test named `test`)
  "async-stream|0.3.6||--exact --skip test|tokio-test = \"0.4\""
  # its lib tests use axum-macros' private test macro, a workspace-only feature
  "axum|0.8.9|--all-features||axum-macros = { version = \"0.5\", features = [\"__private\"] }"
  # Not here: hyper-timeout 0.5.2 (two of its tests need the network, and
  # its third uploads 10 MiB under a 5 ms read timeout on one thread,
  # which times out in about 1 run of 20 on Tokio and 1 of 12 on weft's
  # epoll driver; it found that bulk reads on io_uring were slow, 9
  # timeouts in 12, 0 since: BENCHMARKS.md, "bulk_transfer"),
  # tokio-tungstenite 0.29 (its package has no tests beyond one),
  # tokio-tar 0.3.1 (its package lacks the archives its tests read), and
  # redis 1.8.1, hickory-proto 0.25, hickory-server 0.25,
  # signal-hook-tokio 0.4 and ractor 0.16 (their tests that use Tokio
  # import test_macros, test_support, a serial_test::lock and
  # ractor_example_entry_proc, crates of their repositories that are not
  # published).
  "quinn|0.11.12||"
  "actix-http|3.20.0|--features http2,ws,compress-gzip|"
  "moka|0.12.16|--features future,sync|"
  "tonic|0.13.1|--features gzip,deflate|"
  "async-compression|0.4.52|--features all|"
  "bb8|0.9.1||"
  "tokio-graceful-shutdown|0.20.0||"
  # Its own code trips a lint that newer compilers deny.
  "leaky-bucket|1.1.2||||RUSTFLAGS=--cap-lints=warn"
  # It builds and matches `tokio::net::unix::ReuniteError(read, write)`,
  # which weft's type alias could not be (now a tuple struct, as Tokio's).
  "interprocess|2.4.7|--features tokio|"
  "deadpool|0.13.1|--features managed,unmanaged,rt_tokio_1|"
  # tests/compile_fail.rs (test `ui`) are trybuild snapshots, as above.
  "tarpc|0.38.0|--features full|--skip ui"
  "backon|1.6.0||"
  "tokio-metrics|0.5.2||"
  "tokio-seqpacket|0.9.1||"
  "async-tempfile|0.8.0||"
  "stream-cancel|0.8.2||"
  "tokio-io-timeout|1.2.1||"
  "warp|0.4.3|--features server,websocket|"
  # Its tests found that a `BufReader` over a `File` panicked (debug
  # builds) when it seeked after buffering.
  "async_zip|0.0.19|--features tokio,tokio-fs,deflate|"
  "kameo|0.22.2||"
  # multiproc_linux checks that a killed group's grandchild is gone; here
  # (and on Tokio alike) it stays a zombie, as this container's PID 1 does
  # not reap the orphans it inherits.
  "process-wrap|8.2.2|--features tokio1,kill-on-drop,process-group,process-session,reset-sigmask --test tokio_unix --test multiproc_helper|--skip multiproc_linux"
  "hyper|1.12.0|--features full --lib|"
  # hpack's fixture tests read JSON stories its package does not ship.
  "h2|0.4.20|--lib|--skip hpack::test::fixture"
  "reqwest|0.12.28|--features json,stream,gzip,brotli,deflate,zstd,blocking,cookies,multipart --lib|"
  "poem|3.1.12|--features server,test,websocket,sse,compression,cookie,session,tower-compat,static-files,multipart,tempfile,xml,yaml,requestid --lib|"
  "mobc|0.8.5||"
  "tokio-retry2|0.5.8||"
  "cached|0.55.1|--features async,async_tokio_rt_multi_thread,proc_macro|"
  "rumqttc|0.24.0||"
  "tower-lsp|0.20.0|--lib|"
  "russh|0.52.1||"
  "tower-sessions|0.14.0||"
  # its lib tests use axum's and axum-macros' private test helpers
  "axum-extra|0.10.3|--all-features --lib||axum = { version = \"0.8\", features = [\"__private\", \"macros\", \"query\"] }\\naxum-macros = { version = \"0.5\", features = [\"__private\"] }"
  # Its `fs` feature is left out: ServeDir's tests read ../README.md and
  # ../test-files/ of its repository, which the package lacks.
  "tower-http|0.6.11|--features add-extension,auth,catch-panic,compression-full,cors,decompression-full,follow-redirect,limit,map-request-body,map-response-body,metrics,normalize-path,on-early-drop,propagate-header,redirect,request-id,sensitive-headers,set-header,set-status,timeout,trace,util,validate-request --lib|"
  # Its `color` feature's tests expect colours, which it leaves out when
  # stdout is not a terminal (it is a file here); without the feature the
  # same tests expect plain text.
  "mockito|1.7.2|--no-default-features|"
  "wiremock|0.6.5||"
  "opentelemetry_sdk|0.30.0|--features trace,metrics,logs,rt-tokio,rt-tokio-current-thread,testing,experimental_async_runtime,experimental_trace_batch_span_processor_with_async_runtime,experimental_logs_batch_log_processor_with_async_runtime,experimental_metrics_periodicreader_with_async_runtime --lib|"
  "salvo_core|0.81.0|--features server,http1,http2,cookie,test,unix,socket2,server-handle,matched-path --lib|"
  "libp2p-tcp|0.43.0|--features tokio --lib|"
  "tokio-pipe|0.2.12||"
  "async-shutdown|0.2.2||"
  "triggered|0.1.3||"
  "tryhard|0.5.2||"
  "tokio-rusqlite|0.6.1||"
  # Processes and signals: its supervisor spawns, stops and restarts them.
  "watchexec-supervisor|5.4.1||"
  "tokio-graceful|0.2.2||"
  "tokio-io-utility|0.7.6|--all-features|"
  "tokio-rayon|2.1.0||"
  "axum-server|0.7.3|--features tls-rustls --lib|"
  "tokio-modbus|0.16.1|--features rtu,tcp,rtu-server,tcp-server,rtu-over-tcp-server,sync,rtu-sync,tcp-sync|"
  "tokio-condvar|0.3.0||"
  "tokio-websockets|0.11.4|--features client,server,fastrand,sha1_smol|"
  # tests/ui.rs (test `ui`) is trybuild snapshots, as above.
  "fastwebsockets|0.10.0|--features upgrade,unstable-split,with_axum|--skip ui"
  "async-scoped|0.9.0|--features use-tokio|"
  "tokio-serde|0.9.0|--features json,bincode,cbor,messagepack|"
  # SQLite through the tokio runtime (its pool, timeouts, the worker
  # thread's channel); the other databases need servers. DATABASE_URL
  # is read by its tests and, at build time, by its query macros.
  # sqlx-test is weft's stand-in for its repository's unpublished helper
  # (its `test_type!` macros are not there: sqlite-types and
  # sqlite-derives are left out).
  "sqlx|0.8.6|--features sqlite,runtime-tokio,any,macros,migrate --test sqlite --test sqlite-any --test sqlite-describe --test sqlite-macros --test sqlite-error --test sqlite-test-attr --test sqlite-migrate --test any --test any-pool||sqlx-test = { path = \"$root/tools/ecosystem-tests/sqlx-test\" }|DATABASE_URL=sqlite://tests/sqlite/sqlite.db"
)
# The ones asked for (all by default).
selected=()
for entry in "${packages[@]}"; do
  if [ $# -eq 0 ] || [[ " $* " == *" ${entry%%|*} "* ]]; then selected+=("$entry"); fi
done
# Fetched through a crate that depends on them, so that cargo downloads
# and unpacks them.
{
  printf '[package]\nname = "fetch-ecosystem"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n'
  for entry in "${selected[@]}"; do
    IFS='|' read -r pkg version _ <<<"$entry"
    printf '%s = { version = "=%s", default-features = false }\n' "$pkg" "$version"
  done
  printf '[workspace]\n'
} > "$work/fetch/Cargo.toml"
: > "$work/fetch/src/lib.rs"
meta=$(cd "$work/fetch" && cargo metadata --format-version 1 2>/dev/null)
status=0
for entry in "${selected[@]}"; do
  IFS='|' read -r pkg version features skip extra_dev environment <<<"$entry"
  src=$(python3 -c 'import json,sys; m=json.load(sys.stdin); print([p["manifest_path"] for p in m["packages"] if (p["name"], p["version"]) == tuple(sys.argv[1:])][0].rsplit("/",1)[0])' "$pkg" "$version" <<<"$meta")
  dir="$work/$pkg"
  rm -rf "$dir"
  cp -r "$src" "$dir"
  # The toolchain here, not the one the package pins (sqlx: 1.78), and no
  # cargo configuration of its own (tokio-websockets': nightly-only flags).
  rm -rf "$dir/rust-toolchain" "$dir/rust-toolchain.toml" "$dir/.cargo"
  # The versions last checked (the lock of the patched package, kept here).
  lock="tools/ecosystem-tests/$pkg.Cargo.lock"
  if [ -f "$lock" ]; then cp "$lock" "$dir/Cargo.lock"; else rm -f "$dir/Cargo.lock"; fi
  # The package patches itself too, as its own workspace does: its
  # dev-dependencies (say actix-http-test) then share its types.
  printf '\n[patch.crates-io]\ntokio = { path = "%s/weft-tokio" }\n%s = { path = "." }\n\n[workspace]\n' "$root" "$pkg" >> "$dir/Cargo.toml"
  if [ -n "$extra_dev" ]; then
    python3 - "$dir/Cargo.toml" "$extra_dev" "$root" <<'PY'
import sys
path, dep, root = sys.argv[1], sys.argv[2], sys.argv[3]
dep = dep.replace("$root", root).replace("\\n", "\n")
text = open(path).read()
marker = "[dev-dependencies]\n"
if marker in text:
    text = text.replace(marker, marker + dep + "\n", 1)
else:
    text += "\n" + marker + dep + "\n"
open(path, "w").write(text)
PY
  fi
  # shellcheck disable=SC2086
  # Binaries to binaries.tsv; compiler errors (JSON on stdout) to build.err.
  # Every test target, unless the entry names its own (`--test NAME`).
  targets=--tests
  [[ " $features " == *" --test "* ]] && targets=
  if ! (cd "$dir" && env $environment cargo test $features $targets --no-run --message-format json 2>"$dir/build.log") |
    python3 -c 'import json,sys
err = open(sys.argv[1], "w")
for l in sys.stdin:
    try: m=json.loads(l)
    except ValueError: continue
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"]+"\t"+m["executable"])
    elif m.get("reason")=="compiler-message" and m["message"]["level"]=="error":
        err.write(m["message"]["rendered"])' "$dir/build.err" > "$dir/binaries.tsv"; then
    echo "$pkg: its tests do not build (see $dir/build.err and build.log)"
    # (cargo's own errors, before any compiling, are in build.log; `|| true`
    # so that an empty match does not end the script under pipefail)
    { grep -E '^error' "$dir/build.err" || grep -E '^error' "$dir/build.log" || true; } | head -5 | sed 's/^/  /'
    status=1; continue
  fi
  # Each test binary runs on both of weft's I/O drivers: `auto` (io_uring
  # where the kernel allows it) and `epoll`.
  for driver in $DRIVERS; do
    passed=0; failed=0
    while IFS=$'\t' read -r name exe; do
      out="$dir/out.$name.$driver.txt"
      # shellcheck disable=SC2086
      if (cd "$dir" && env $environment WEFT_IO_DRIVER="$driver" timeout 120 "$exe" --test-threads=2 $skip > "$out" 2>&1); then
        passed=$((passed + $(awk '/^test result/ { n += $4 } END { print n + 0 }' "$out")))
      else
        failed=$((failed + 1)); status=1
        echo "$pkg/$name ($driver): FAILED"; { grep -E '^    [^ ]+$' "$out" || tail -3 "$out"; } | sed 's/^/  /'
      fi
    done < "$dir/binaries.tsv"
    echo "$pkg ($driver): $(wc -l < "$dir/binaries.tsv") test files, $passed tests passed, $failed files failing"
  done
done
exit $status
