#!/usr/bin/env bash
# Launch overhead of a cage, side by side in one hyperfine run (median wall time):
#   1. bare `true`
#   2. jaula run --backend landlock -- true
#   3. jaula run --backend bwrap -- true
#   4. the seed's own bubblewrap prefix for the same policy, then true
# on a realistic scratch home (a few hundred entries, the default secrets), with a release
# build. Writes bench/results/launch.json; docs/benchmarks.md reports it.
#
# Not a test and never run by CI: timings belong to a machine, not to a pass/fail.
# Needs: hyperfine, bwrap, python3, and the seeds (../shared/seeds, or $JAULA_SEEDS) for row 4.
#
# Usage: bench/launch.sh [--runs N] [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

runs=300
build=1
while (($#)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    *) echo "usage: $0 [--runs N] [--no-build]" >&2; exit 2 ;;
  esac
done

for tool in hyperfine bwrap python3; do
  command -v "$tool" >/dev/null || { echo "bench: $tool is not installed" >&2; exit 1; }
done
# The seeds sit beside the clone (../shared/seeds); from a worktree one level deeper, or
# wherever JAULA_SEEDS points.
seed_diff=
for dir in "${JAULA_SEEDS:-}" "$root/../shared/seeds" "$root/../../shared/seeds"; do
  if [[ -n $dir && -f $dir/000_10278aa537b303a1.txt ]]; then
    seed_diff=$dir/000_10278aa537b303a1.txt
    break
  fi
done
[[ -n $seed_diff ]] || { echo "bench: the seeds are absent (set JAULA_SEEDS to their directory)" >&2; exit 1; }

if ((build)); then
  cargo build --release -p jaula
fi
jaula=$root/target/release/jaula
truebin=$(readlink -f "$(type -P true)")

# The scratch tree lives under target/, never under /tmp: /tmp is a writable root of every
# cage, which would make the whole home writable and the comparison meaningless.
work=$root/target/bench-launch
rm -rf "$work"
mkdir -p "$work"
work=$(readlink -f "$work")
home=$work/home
repo=$home/src/repo
mkdir -p "$repo"

python3 - "$home" <<'PY'
import os, sys
home = sys.argv[1]
def put(rel, text="x\n"):
    path = os.path.join(home, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
# The default secrets, present.
for rel in [".ssh/id_ed25519", ".ssh/id_ed25519.pub", ".ssh/known_hosts", ".ssh/config",
            ".aws/credentials", ".aws/config", ".kube/config", ".gnupg/pubring.kbx",
            ".config/gcloud/credentials.db", ".config/gh/hosts.yml", ".docker/config.json",
            ".git-credentials", ".netrc", ".pgpass", ".claude/.credentials.json",
            ".cargo/credentials.toml", ".agents-city/.runtime/broker/w1.token",
            ".agents-city/.runtime/broker/w2.token", ".claude/channels/seat1/.env",
            ".claude/channels/seat2/.env"]:
    put(rel, "secret\n")
put(".config/jaula/config.toml", "# bench\n")
# State and caches a working agent's home has.
for rel in [".claude/settings.json", ".claude.json", ".bashrc", ".profile", ".gitconfig",
            ".cargo/config.toml", ".cargo/.package-cache", ".npmrc", ".agents-city/state.json"]:
    put(rel)
for d in [".cargo/registry", ".cargo/git", ".cargo/bin", ".rustup", ".npm/_cacache",
          ".cache/pip", ".local/share/app", ".local/state/app", ".local/bin", "go/pkg"]:
    os.makedirs(os.path.join(home, d), exist_ok=True)
# A few hundred more entries: home-level dotfiles and projects, app configs, cache blobs.
for i in range(120):
    put(f".dotfile{i:03}")
for i in range(60):
    put(f"projects/p{i:03}/README")
    os.makedirs(os.path.join(home, f"dir{i:03}"), exist_ok=True)
for i in range(60):
    put(f".config/app{i:03}/settings.ini")
for i in range(40):
    put(f".cache/blob{i:03}")
    put(f".claude/projects/p{i:03}.jsonl")
PY
token=$home/.agents-city/.runtime/broker/w1.token
entries=$(find "$home" | wc -l)
top=$(find "$home" -mindepth 1 -maxdepth 1 | wc -l)

# The seed's cage.py, extracted from its diff as crates/cli/tests/seed_compat.rs does
# (never copied into the project), with the `rutas` helpers the seeds README specifies.
seed=$work/seed
mkdir -p "$seed"
python3 - "$seed_diff" "$seed/cage.py" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith("@@"))
body = [l[1:] for l in lines[start + 1:] if l.startswith("+")]
open(sys.argv[2], "w").write("\n".join(body) + "\n")
PY
cat > "$seed/rutas.py" <<'PY'
import os
def canonicaliza(p):
    return os.path.realpath(os.path.expanduser(p))
def dentro_de(a, b):
    a, b = os.path.normpath(a), os.path.normpath(b)
    return os.path.commonpath([a, b]) == b
def motivo_bloqueo(repo, sealed):
    for s in sealed:
        if dentro_de(repo, s):
            return repo + ' is inside the sealed root ' + s
        if dentro_de(s, repo):
            return repo + ' contains the sealed root ' + s
    return None
PY

export HOME=$home
cd "$repo"
seed_prefix=$(env -i PATH="$PATH" HOME="$home" CITY_CAGE_BWRAP=1 \
  python3 "$seed/cage.py" line --repo "$repo" --home "$home" --token-file "$token")
[[ $seed_prefix == *bwrap* ]] || { echo "bench: the seed printed no bwrap prefix: $seed_prefix" >&2; exit 1; }
# Every path here is plain (no spaces or quotes), so hyperfine -N splits the prefix as sh would.
seed_cmd="${seed_prefix//\'/}$truebin"

jaula_args="--repo $repo --home $home --token-file $token"
ll_cmd="$jaula run --backend landlock $jaula_args -- $truebin"
bw_cmd="$jaula run --backend bwrap $jaula_args -- $truebin"

# Each must really cage before it is timed.
for cmd in "$ll_cmd" "$bw_cmd" "$seed_cmd"; do
  $cmd || { echo "bench: this does not run: $cmd" >&2; exit 1; }
done
for cmd in "$ll_cmd" "$bw_cmd" "$seed_cmd"; do
  probe=${cmd%"$truebin"}
  if $probe /bin/cat "$home/.ssh/id_ed25519" >/dev/null 2>&1 && \
     [[ -n "$($probe /bin/cat "$home/.ssh/id_ed25519" 2>/dev/null)" ]]; then
    echo "bench: the SSH key is readable under: $probe" >&2; exit 1
  fi
done

mkdir -p "$root/bench/results"
raw=$work/hyperfine.json
hyperfine -N --warmup 30 --runs "$runs" --export-json "$raw" \
  -n "bare true" "$truebin" \
  -n "jaula run --backend landlock" "$ll_cmd" \
  -n "jaula run --backend bwrap" "$bw_cmd" \
  -n "seed bwrap prefix" "$seed_cmd"

python3 - "$raw" "$root/bench/results/launch.json" "$entries" "$top" "$runs" <<'PY'
import json, platform, os, subprocess, sys
raw, out, entries, top, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
results = json.load(open(raw))["results"]
def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()
def version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return None
rows = {}
for r in results:
    rows[r["command"]] = {
        "median_ms": r["median"] * 1e3,
        "mean_ms": r["mean"] * 1e3,
        "stddev_ms": (r["stddev"] or 0) * 1e3,
        "min_ms": r["min"] * 1e3,
        # CPU time is far less sensitive than wall time to other load on the machine.
        "user_ms": r["user"] * 1e3,
        "system_ms": r["system"] * 1e3,
        "max_ms": r["max"] * 1e3,
        "runs": len(r["times"]),
    }
bare = rows["bare true"]["median_ms"]
ll = rows["jaula run --backend landlock"]["median_ms"]
bw = rows["jaula run --backend bwrap"]["median_ms"]
seed = rows["seed bwrap prefix"]["median_ms"]
report = {
    "machine": {
        "nproc": os.cpu_count(),
        "kernel": platform.release(),
        "cpu": cpu(),
        "bwrap": version(["bwrap", "--version"]),
        "hyperfine": version(["hyperfine", "--version"]),
    },
    "home": {"entries": entries, "top_level_entries": top},
    "runs_per_command": runs,
    "load_average_after": list(os.getloadavg()),
    "median_ms": {k: round(v["median_ms"], 3) for k, v in rows.items()},
    "cpu_ms": {k: round(v["user_ms"] + v["system_ms"], 3) for k, v in rows.items()},
    "detail": rows,
    "ratios": {
        "landlock_over_bare": round(ll / bare, 2),
        "bwrap_over_bare": round(bw / bare, 2),
        "seed_over_landlock": round(seed / ll, 2),
        "seed_over_jaula_bwrap": round(seed / bw, 2),
    },
    "targets": {
        "landlock_within_2x_of_bare": {"met": ll <= 2 * bare, "ratio": round(ll / bare, 2)},
        "landlock_2_5x_faster_than_seed": {"met": seed >= 2.5 * ll, "ratio": round(seed / ll, 2)},
    },
}
json.dump(report, open(out, "w"), indent=2)
print(json.dumps({"median_ms": report["median_ms"], "cpu_ms": report["cpu_ms"], "ratios": report["ratios"], "targets": report["targets"]}, indent=2))
PY
echo "bench: wrote bench/results/launch.json"
