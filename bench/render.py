#!/usr/bin/env python3
"""Turn bench/results/bench.json into docs/benchmarks.md and the scaling plots.

Run by bench/run after a full run; run it alone to re-render: `bench/render.py
bench/results/bench.json`. Everything above the KEEP marker in docs/benchmarks.md is
rewritten; everything below it (other sections, e.g. the network proxy's) is kept.
"""

import json
import os
import subprocess
import sys

KEEP = "<!-- bench/run rewrites everything above this line; sections below it are kept -->"


def ms(v):
    if v is None:
        return "–"
    if v >= 1000:
        return f"{v / 1000:.2f} s"
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 10:
        return f"{v:.1f} ms"
    return f"{v:.2f} ms"


def ns(v):
    if v >= 1e9:
        return f"{v / 1e9:.2f} s"
    if v >= 1e6:
        return f"{v / 1e6:.2f} ms"
    if v >= 1e3:
        return f"{v / 1e3:.1f} µs"
    return f"{v:.0f} ns"


def x(v):
    return f"{v:.2f}x"


class Doc:
    def __init__(self, r, root):
        self.r = r
        self.root = root
        self.lines = []
        self.targets = []

    def w(self, *lines):
        self.lines.extend(lines)

    def target(self, name, target, measured, met, miss):
        self.targets.append((name, target, measured, met, miss))
        return ("**met**" if met else f"**missed** ({miss})")

    def table(self, header, rows):
        self.w("| " + " | ".join(header) + " |",
               "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        for row in rows:
            self.w("| " + " | ".join(str(c) for c in row) + " |")
        self.w("")


def plots(r, root):
    """Scaling curves as SVG, with gnuplot. Returns the paths written (relative to root)."""
    out_dir = os.path.join(root, "bench/results")
    written = []
    groups = r["groups"]
    data_dir = os.path.join(root, "target/bench-run")
    os.makedirs(data_dir, exist_ok=True)

    def curve(name, title, xlabel, keys, series, target_line=None,
              ylabel="median wall time (ms)", logscale="xy"):
        dat = os.path.join(data_dir, f"{name}.dat")
        with open(dat, "w") as f:
            for k in keys:
                f.write(str(k) + " " + " ".join(f"{s[1](k):.4f}" for s in series) + "\n")
        svg = os.path.join(out_dir, f"{name}.svg")
        plot = []
        for i, (label, _) in enumerate(series):
            plot.append(f"'{dat}' using 1:{i + 2} with linespoints lw 2 pt 7 title '{label}'")
        if target_line:
            plot.append(target_line)
        script = "\n".join([
            "set terminal svg size 720,440 dynamic font 'sans,12' background '#ffffff'",
            f"set output '{svg}'",
            f"set title '{title}'",
            f"set logscale {logscale}",
            f"set xlabel '{xlabel}'",
            f"set ylabel '{ylabel}'",
            "set grid",
            "set key top left",
            f"set xrange [{min(keys) * 0.7}:{max(keys) * 1.4}]",
            "plot " + ", ".join(plot),
        ])
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
        written.append(os.path.relpath(svg, root))

    if "home" in groups:
        rows = groups["home"]["rows"]
        sizes = groups["home"]["sizes"]
        base = rows[str(sizes[0])]["landlock"]["median_ms"]
        curve("launch-vs-home-entries", "jaula run -- true: launch vs entries in the home",
              "entries at the top of the home",
              sizes, [("landlock", lambda n: rows[str(n)]["landlock"]["median_ms"]),
                      ("bwrap", lambda n: rows[str(n)]["bwrap"]["median_ms"])],
              f"{3 * base:.4f} with lines dt 2 lc rgb '#888888' title 'target: 3x landlock at {sizes[0]}'")
    if "roots" in groups:
        rows = groups["roots"]["rows"]
        counts = groups["roots"]["counts"]
        curve("launch-vs-roots", "jaula run -- true: launch vs sealed + writable roots",
              "extra roots (half --deny, half --allow-write)",
              counts, [("landlock", lambda n: rows[str(n)]["landlock"]["median_ms"]),
                       ("bwrap", lambda n: rows[str(n)]["bwrap"]["median_ms"])])
    if "percall" in groups:
        C = groups["percall"]["curve"]
        rs = C["rows"]
        curve("gate-calls-per-second", "gated calls per second (create + unlink) by parallel callers",
              "parallel callers (processes)", C["procs"],
              [("bare", lambda p: rs[f"bare, {p} callers"]["calls_per_second"]),
               ("gate on (jaula run, default backend)",
                lambda p: rs[f"jaula default, {p} callers"]["calls_per_second"])],
              ylabel="calls per second (median)")
    micro = groups.get("micro", {})
    plan = sorted((int(v["case"]), v["median_ns"] / 1e6) for k, v in micro.items()
                  if k.startswith("landlock_plan_home_entries/"))
    if plan:
        d = dict(plan)
        curve("plan-vs-home-entries", "Landlock plan alone (criterion, in-memory tree)",
              "entries at the top of the home", list(d), [("plan", lambda n: d[n])])
    return written


def render(r, root):
    d = Doc(r, root)
    g = r["groups"]
    m = r["machine"]
    ll = m.get("landlock")
    if isinstance(ll, dict):
        ll = f"{ll.get('landlock')}, ABI {ll.get('abi')}"
    d.w("# Benchmarks",
        "",
        "Generated by `bench/run` from `bench/results/bench.json`; do not edit by hand (edit",
        "`bench/render.py`). Every figure below was measured in the same run, side by side,",
        "so ratios hold better than absolute times; medians of wall time throughout.",
        "",
        "## How to run",
        "",
        "```",
        "sudo bench/run            # installs hyperfine, bubblewrap, firejail, gnuplot, npm if missing,",
        "                          # builds jaula (release: static-pie and dynamic), measures,",
        "                          # rewrites this page",
        "bench/run --only launch,home --no-build   # a subset (writes bench-partial.json only);",
        "                          # groups: micro launch gate work home roots contract network",
        "                          # realwork percall",
        "bench/render.py bench/results/bench.json  # re-render this page and the plots",
        "```",
        "",
        "Root is needed for `apt-get`, the contract hand-over and wipe, uid allocation, and the",
        "per-call group's tmpfs. The realwork group fills the scratch home's npm cache from the",
        "registry once (kept between runs) and vendors serde + serde_json from the cargo cache",
        "(else the registry); everything it times is offline.",
        "The seeds must be at `../shared/seeds` (or `JAULA_SEEDS=dir`): the seed's `cage.py` is",
        "extracted from its diff at run time, never copied into the project.",
        "Scratch trees live under `target/bench-run/`, never under `/tmp` (a writable root of",
        "every cage). The scratch homes are made by `jaula-scratch-home` (jaula-testkit's",
        "`bench_home`, the one definition the tests share). Before timing, every cage is",
        "checked to run and to hide the scratch SSH key (and, for the roots curve, a `--deny`",
        "root).",
        "",
        "## Machine",
        "",
        f"- {m.get('cpu')}, {m.get('nproc')} CPUs, {m.get('memory_gib')} GiB; {m.get('os')}, Linux {m.get('kernel')};"
        f" Landlock: {ll}",
        f"- {m.get('jaula')}; {m.get('bwrap')}; {m.get('firejail')}; {m.get('hyperfine')}; {m.get('git')}; {m.get('rustc')}",
        f"- run on {r['generated']}, {r.get('duration_s', 0) / 60:.1f} minutes of measuring "
        f"(plus the build); load average {r['load_average_before'][0]:.2f} before, "
        f"{r['load_average_after'][0]:.2f} after. This is a shared 2-vCPU VM: other jobs may",
        "  run beside the benchmark, so compare rows with each other, not with another day.",
        "")
    body = []
    d.lines, head = [], d.lines

    # ------------------------------------------------------------ launch
    if "launch" in g:
        L = g["launch"]["rows"]
        homes = g["launch"]["homes"]
        bare = L["bare true"]["median_ms"]
        d.w("## Launch: `CMD -- true`", "",
            f"`hyperfine -N`, {L['bare true']['runs']} timed runs per row after 10 warm-up runs."
            f" *minimal*: a home holding only the repo and the token file (nothing to seal);"
            f" *full*: a real-sized home, {homes['full']['entries']} entries"
            f" ({homes['full']['top_level_entries']} at its top level), every default secret present"
            " (`~/.ssh`, `~/.aws`, `~/.kube`, `~/.gnupg`, gcloud, gh, docker, netrc, pgpass,"
            " Claude and cargo credentials, broker tokens, channel `.env` files), caches, state,"
            " projects and dotfiles. The seed row is the seed's own `cage.py line` bubblewrap"
            " prefix for the same home, repo and token file. firejail has no policy of jaula's;"
            " its *full* row gets jaula's policy translated: `--read-only=/`, `--read-write=` each"
            " existing writable root, `--blacklist=` each sealed path (from `jaula render bwrap`).",
            "")
        rows = []
        for label, s in L.items():
            rows.append([label, ms(s["median_ms"]),
                         ms(s["min_ms"]), ms(s["user_ms"] + s["system_ms"]), x(s["median_ms"] / bare)])
        d.table(["command", "median", "min", "CPU (user+sys)", "÷ bare true"], rows)
        ll = L["jaula run, landlock, full"]["median_ms"]
        seed = L["seed bwrap prefix, full"]["median_ms"]
        floor = L["jaula --version (process floor)"]["median_ms"]
        r1 = ll / bare
        r2 = seed / ll
        d.w("| target | measured | verdict |", "|---|---|---|")
        d.w(f"| landlock, full policy ≤ 2x bare `true` | {x(r1)} ({ms(ll)} vs {ms(bare)}) | "
            + d.target("launch ≤ 2x bare", "≤ 2.00x", x(r1), r1 <= 2,
                       f"{r1 / 2:.1f} times over the target; {ms(ll - 2 * bare)} too slow") + " |")
        d.w(f"| (floor) `jaula --version` alone ÷ bare `true` | {x(floor / bare)} ({ms(floor)}) | "
            + ("for reference: jaula's own process start (parse arguments, print, exit) is already"
               " above the 2x target, so no cage can meet it |" if floor > 2 * bare else
               f"for reference: the 2x target leaves {ms(2 * bare - floor)} above jaula's own process start |"))
        d.w(f"| landlock, full policy ≥ 2.5x faster than the seed's bwrap prefix | {x(r2)} ({ms(seed)} vs {ms(ll)}) | "
            + d.target("launch ≥ 2.5x faster than seed", "≥ 2.50x", x(r2), r2 >= 2.5,
                       f"{r2:.2f}x, {(1 - r2 / 2.5) * 100:.0f}% short") + " |")
        d.w("")

    # ------------------------------------------------------------ work
    if "work" in g:
        W = g["work"]
        d.w("## In-cage overhead on real work", "",
            f"Bare vs caged, same command, same `HOME` (the full scratch home). The caged time"
            f" includes the launch. `git status --porcelain` in a committed repository of"
            f" {W['git_status']['files']:,} files (warm cache); `find /usr -xdev` over"
            f" {W['find_usr']['entries']:,} entries (directories only root may search are pruned on"
            " both sides: the cage drops `CAP_DAC_OVERRIDE`); `cargo build --offline` of a"
            " dependency-free ~3,000-line crate from a clean target directory (debug profile).",
            "")
        rows = []
        verdicts = []
        for key, title, tgt in (("git_status", "git status", True), ("find_usr", "find /usr", False),
                                ("cargo_build", "cargo build", True)):
            R = W[key]["rows"]
            bare = R[f"{title}, bare"]["median_ms"]
            for b in ("bare", "landlock", "bwrap"):
                s = R[f"{title}, {b}"]
                over = s["median_ms"] / bare - 1
                cell = "–" if b == "bare" else f"{over * 100:+.1f}%"
                verdict = ""
                if tgt and b != "bare":
                    verdict = d.target(f"{title} overhead, {b}", "≤ +5%", f"{over * 100:+.1f}%",
                                       over <= 0.05, f"{over * 100:+.1f}%, {(over - 0.05) * 100:.1f} points over")
                elif b != "bare":
                    verdict = "(no target)"
                rows.append([f"{title}, {b}", ms(s["median_ms"]), ms(s["min_ms"]), s["runs"], cell,
                             "≤ +5%" if tgt and b != "bare" else "", verdict])
        d.table(["command", "median", "min", "runs", "overhead", "target", "verdict"], rows)

    realwork_section(d, g)
    percall_section(d, g)

    # ------------------------------------------------------------ scaling
    if "home" in g:
        H = g["home"]["rows"]
        sizes = g["home"]["sizes"]
        d.w("## Scaling: launch vs entries in the home", "",
            "`jaula run -- true` with homes of exactly N top-level entries (`~/.ssh` holding"
            " the key, `~/.agents-city` holding the token, `~/src/repo`, and N − 3 more, one in"
            " four a directory). Natively, Landlock can only grant, so a home holding a sealed"
            " path is split: every other entry of it gets a rule of its own (one `openat2`,"
            " one `landlock_add_rule`, one `close` each). The bwrap backend hides sealed paths"
            " with mounts and grants `/` whole inside its view, so it does not grow.",
            "", "![launch vs home entries](../bench/results/launch-vs-home-entries.svg)", "")
        rows = []
        for n in sizes:
            row = [f"{n:,}"]
            for b in ("landlock", "bwrap"):
                s = H[str(n)][b]
                row += [ms(s["median_ms"]), x(s["median_ms"] / H[str(sizes[0])][b]["median_ms"])]
            row.append(H[str(n)]["landlock"]["runs"])
            rows.append(row)
        d.table(["home entries", "landlock", f"÷ at {sizes[0]}", "bwrap", f"÷ at {sizes[0]}", "runs"], rows)
        if "10000" in H:
            for b in ("landlock", "bwrap"):
                ratio = H["10000"][b]["median_ms"] / H[str(sizes[0])][b]["median_ms"]
                d.w(f"- {b}: 10,000 entries ÷ 10 entries = {x(ratio)} (target ≤ 3x): "
                    + d.target(f"10,000 home entries ≤ 3x 10 entries, {b}", "≤ 3.00x", x(ratio), ratio <= 3,
                               f"{ratio / 3:.1f} times over the target"))
            d.w("")
    if "roots" in g:
        R = g["roots"]["rows"]
        counts = g["roots"]["counts"]
        d.w("## Scaling: launch vs sealed and writable roots", "",
            "`jaula run -- true` on the 10-entry home with N extra roots, half `--deny DIR`"
            " (each holding a file) and half `--allow-write DIR`, all directories of one"
            " parent. No target; the curve shows where the cost goes.",
            "", "![launch vs roots](../bench/results/launch-vs-roots.svg)", "")
        rows = []
        for n in counts:
            rows.append([f"{n:,}", ms(R[str(n)]["landlock"]["median_ms"]),
                         ms(R[str(n)]["bwrap"]["median_ms"]), R[str(n)]["landlock"]["runs"]])
        d.table(["extra roots", "landlock", "bwrap", "runs"], rows)

    # ------------------------------------------------------------ contracts
    if "contract" in g and "trees" in g["contract"]:
        C = g["contract"]
        d.w("## Contracts: hand-over, wipe, uid allocation", "",
            f"As root, on {C['filesystem']}, uids from {C['uid_range']}. A tree of N files in"
            " directories of 100 (no `.git`), copied from a template (`cp -a`) before each wipe"
            " run and given back to root (`chown -R -h 0:0`) before each hand-over run, outside"
            " the timing. `jaula contract handover` walks with directory fds (`openat`"
            " `O_NOFOLLOW`, `fchownat` `AT_SYMLINK_NOFOLLOW`); the peer is `chown -R -h"
            " UID:UID` on the same tree. `jaula contract wipe` removes the Contract's whole tree"
            " and retires its uid (a rewrite of the uid map: lock, temp file, fsync, rename, and"
            " an evidence line); the peer is `rm -rf` of the same tree.",
            "")
        rows = []
        for n, t in C["trees"].items():
            for op, ours, peer in (("handover", "jaula contract handover", "chown -R"),
                                   ("wipe", "jaula contract wipe", "rm -rf")):
                a, b = t[op][ours]["median_ms"], t[op][peer]["median_ms"]
                ratio = a / b
                verdict = d.target(f"{op} of {int(n):,} files ≤ {peer}", "≤ 1.00x", x(ratio), ratio <= 1,
                                   f"{(ratio - 1) * 100:.0f}% slower")
                rows.append([f"{op}, {int(n):,} files", ms(a), peer, ms(b), x(ratio), "≤ 1.00x", verdict,
                             t[op][ours]["runs"]])
        d.table(["operation", "jaula", "peer", "peer time", "jaula ÷ peer", "target", "verdict", "runs"], rows)
        U = C["uid_alloc"]
        d.w("uid allocation (`jaula contract uid C`, one process per call, a fresh state dir"
            " per run; file lock, temp file + fsync + rename per allocation):", "")
        rows = [[label, s["allocations"], ms(s["median_ms"]), f"{s['per_second']:.0f}/s"]
                for label, s in U.items()]
        d.table(["processes", "allocations", "median", "throughput"], rows)

    # ------------------------------------------------------------ micro
    micro = g.get("micro")
    if micro:
        d.w("## Micro-benchmarks (criterion)", "",
            "`cargo bench -p jaula-bench` (`crates/bench/benches/micro.rs`): the pure parts"
            " whose cost grows with input, 20 samples each. The plan is computed over an"
            " in-memory tree (a home with every default secret and N more entries), so only"
            " the planner's own work is timed. Roots: half extra sealed, half extra writable.",
            "", "![plan vs home entries](../bench/results/plan-vs-home-entries.svg)", "")
        rows = [[v["group"], v["case"], ns(v["median_ns"])] for v in micro.values()]
        d.table(["benchmark", "input", "median"], rows)

    body = d.lines
    # ------------------------------------------------------------ summary
    d.lines = []
    d.w("## Targets at a glance", "")
    missed = [t for t in d.targets if not t[3]]
    d.w(f"{len(d.targets) - len(missed)} of {len(d.targets)} targets met. Missed: "
        + ("none." if not missed else "; ".join(f"{t[0]} ({t[4]})" for t in missed) + "."), "",
        "A target missed by a few percent is within this machine's run-to-run noise (compare",
        "the min columns); it is still reported as missed. A missed target is a finding, not",
        "a reason to change the benchmark.", "")
    d.table(["target", "wanted", "measured", "met?"],
            [[t[0], t[1], t[2], "yes" if t[3] else "**no**"] for t in d.targets])
    summary = d.lines + issue22_targets(r) + issue12_targets(r)
    return head + summary + body


def issue12_targets(r):
    """Issue 12's targets (point 5): each a ratio against a baseline timed in this run,
    beside the figure the issue was filed with."""
    g = r["groups"]
    rows = []

    # Where the launch's time goes, measured part by part: a section below the KEEP marker.
    WHY_LAUNCH = "why: \"Where the launch goes\" below"

    def row(figure, today, target, measured, verdict):
        rows.append([figure, today, target, measured, verdict])

    def met(ok, miss):
        return "**met**" if ok else f"**missed** ({miss})"

    if "launch" in g:
        L = g["launch"]["rows"]
        bare = L["bare true"]["median_ms"]
        bw = L["jaula run, bwrap, full"]["median_ms"]
        seed = L["seed bwrap prefix, full"]["median_ms"]
        ratio = bw / seed
        row("default `jaula run -- true` (bwrap view + inner stage) ÷ the seed's bwrap prefix,"
            " full home", "2.3x", "≤ 1.00x (stretch 0.80x)", f"{x(ratio)} ({ms(bw)} vs {ms(seed)})",
            met(ratio <= 1.0, f"{ms(bw - seed)} slower than the seed; {WHY_LAUNCH}"))
        ll = L["jaula run, landlock, full"]["median_ms"]
        row("`jaula run --backend landlock -- true` ÷ bare `true`, full home", "16x", "≤ 4.00x",
            f"{x(ll / bare)} ({ms(ll)})", met(ll / bare <= 4, f"{ms(ll - 4 * bare)} over; {WHY_LAUNCH}"))
        floor = L["jaula --version (process floor)"]["median_ms"]
        dyn = L.get("jaula --version, dynamically linked build")
        extra = f"; dynamic build {x(dyn['median_ms'] / bare)}" if dyn else ""
        row("`jaula --version` ÷ bare `true` (the process floor; static-pie build)", "2.3x",
            "≤ 1.30x", f"{x(floor / bare)} ({ms(floor)}){extra}",
            met(floor / bare <= 1.3, f"{x(floor / bare)}; {WHY_LAUNCH}"))
    if "work" in g:
        R = g["work"]["git_status"]["rows"]
        bare = R["git status, bare"]["median_ms"]
        launch = g.get("launch", {}).get("rows", {})
        for b, today in (("landlock", "+8%"), ("bwrap", "+18%")):
            caged = R[f"git status, {b}"]["median_ms"]
            over = caged / bare - 1
            # What costs: the caged time includes the launch; the same cage's launch of
            # `true` (full home) is the part of the overhead that is not git's own work.
            start = launch.get(f"jaula run, {b}, full", {}).get("median_ms")
            where = (f"; of the {ms(caged - bare)} added, the launch alone takes {ms(start)}"
                     if start else "")
            row(f"git status, {g['work']['git_status']['files']:,}-file repo, {b}", today, "≤ +5%",
                f"{over * 100:+.1f}%{where}",
                met(over <= 0.05, f"{(over - 0.05) * 100:.1f} points over"))
    if "contract" in g and "trees" in g["contract"]:
        T = g["contract"]["trees"]
        big = str(max(int(n) for n in T))
        for op, ours, peer, today in (("hand-over", "jaula contract handover", "chown -R", "1.8x"),
                                      ("wipe", "jaula contract wipe", "rm -rf", "1.2x")):
            key = "handover" if op == "hand-over" else op
            ratio = T[big][key][ours]["median_ms"] / T[big][key][peer]["median_ms"]
            row(f"{op} ÷ `{peer}`, {int(big):,} files", today, "≤ 1.00x", x(ratio),
                met(ratio <= 1.0, f"{(ratio - 1) * 100:.0f}% slower"))
    if "network" in g:
        N = g["network"]
        ratio = N["connect_tunnel_mib_s"] / N["direct_mib_s"]
        row("proxy throughput ÷ direct (`CONNECT` tunnel, 100 MiB)", "49%", "≥ 80%",
            f"{ratio * 100:.0f}% ({N['connect_tunnel_mib_s']} vs {N['direct_mib_s']} MiB/s)",
            met(ratio >= 0.8, f"{(0.8 - ratio) * 100:.0f} points short"))
    if "home" in g and "10000" in g["home"]["rows"]:
        H = g["home"]["rows"]
        small = str(g["home"]["sizes"][0])
        t10, t10k = H[small]["landlock"]["median_ms"], H["10000"]["landlock"]["median_ms"]
        per_entry_us = (t10k - t10) * 1000 / (10_000 - int(small))
        calls = g["home"].get("syscalls", {})
        if "10" in calls and "10000" in calls:
            per_call = (calls["10000"]["total"] - calls["10"]["total"]) / (10_000 - 10)
            measured = (f"{per_entry_us:.1f} µs and {per_call:.2f} system calls per extra entry"
                        f" ({x(t10k / t10)} the {small}-entry launch)")
            verdict = f"{per_call / 3:.2f}x the floor of 3 calls"
        else:
            measured = f"{per_entry_us:.1f} µs per extra entry ({x(t10k / t10)})"
            verdict = "reported (strace absent: no call count)"
        row("10,000-entry home, landlock: cost per extra entry", "27x the 10-entry launch",
            "reported against the floor: 3 system calls per granted entry", measured, verdict)
    if not rows:
        return []
    out = ["## Issue 12 targets", "",
           "Each figure a ratio against a baseline timed in this same run; *today* is the figure",
           "issue 12 was filed with. The launch rows time the static-pie release build (see",
           "\"How to run\"); the dynamically linked build's floor is given beside it.", "",
           "| figure | today | target | measured | verdict |", "|---|---:|---:|---:|---:|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out + [""]


LAYERS = ["bare", "seed bwrap prefix", "jaula default", "default --no-socket-gate", "landlock",
          "landlock --no-socket-gate"]
# Issue 22: each real-work row's default ÷ bare, the file-creation micro-benchmarks looser.
WORK_TARGET = 1.05
WORK_TARGET_MICRO = {"python_creates": 1.15, "parallel_touch": 1.15}
PER_CALL_TARGET_US = 15.0
# The gate scales with cores as bare does: its speedup from 1 caller to one per core is at
# least this share of bare's.
SCALING_SHARE = 0.8


def realwork_section(d, g):
    """Every layer's price on real work: one table, a column per layer."""
    if "realwork" not in g:
        return
    R = g["realwork"]
    layers = R.get("layers", LAYERS)
    d.w("## Every layer's price on real work", "",
        "Each workload runs in the cage's repo (`~/src/repo` of the full, credential-filled"
        " scratch home, `HOME` set to it), one `hyperfine -N` run per workload so its rows are"
        " side by side: bare; the seed's own `cage.py line` bubblewrap prefix; `jaula run`"
        " with its default backend (no `--backend`), with and without the gate; `--backend"
        " landlock`, with and without the gate. Each cell is the median wall time and, in"
        " brackets, ÷ bare; the caged times include the launch. A `--prepare` step (not timed)"
        " removes what the previous run left. *npm*: `npm install --offline` of express +"
        " lodash from a lockfile, the home's npm cache filled from the registry once before"
        " timing. *git clone*: `git clone --no-local` of this repository (a bare copy made"
        f" at the start of the run). *untar*, *python*, *touch*: {R['files']:,} files"
        " created then `rm -rf` (python: one `open` + `write` each; touch: 4 `xargs -P 4`"
        f" processes, {R['files'] // 4:,} files each). *cargo*: `cargo build --offline` (debug) of a crate"
        " depending on serde + serde_json, their sources vendored once, from a clean target"
        " directory.", "")
    rows = []
    for key, w in R["workloads"].items():
        if "skipped" in w:
            rows.append([w["title"], f"skipped: {w['skipped']}"] + [""] * (len(layers) - 1) + [""])
            continue
        S = w["rows"]
        bare = S[f"{w['title']}, bare"]["median_ms"]
        cells = [w["title"]]
        for tag in layers:
            s = S[f"{w['title']}, {tag}"]["median_ms"]
            cells.append(ms(s) if tag == "bare" else f"{ms(s)} ({x(s / bare)})")
        cells.append(S[f"{w['title']}, bare"]["runs"])
        rows.append(cells)
    d.table(["workload"] + layers + ["runs"], rows)


def percall_section(d, g):
    if "percall" not in g:
        return
    P = g["percall"]
    n = P["files"]
    d.w("## The gate: the price of one call, and calls per second by callers", "",
        f"On a {P['filesystem']} repo (a minimal home mounted under `target/bench-run/`,"
        f" never `/tmp`): one python process creates {n:,} empty files (`openat` with"
        f" `O_CREAT`) and unlinks them, {2 * n:,} gated calls. Each cage also launches `true`,"
        " so its launch is taken out: per call = ((gated − ungated) − (gated `true` −"
        f" ungated `true`)) ÷ {2 * n:,}.", "")
    S = P["rows"]
    rows = []
    for tag in [t for t in LAYERS if t != "seed bwrap prefix"]:
        t = S.get(f"{tag}: true")
        w = S.get(f"{tag}: {n} creates + {n} unlinks")
        if t and w:
            rows.append([tag, ms(t["median_ms"]), ms(w["median_ms"]), t["runs"]])
    d.table(["cage", "`true`", f"{n:,} creates + {n:,} unlinks", "runs"], rows)
    d.table(["per call", "µs"], [[k, f"{v:.2f}"] for k, v in P["per_call_us"].items()])
    C = P["curve"]
    d.w(f"Calls per second: {C['files']:,} files split evenly across P processes (forked, each"
        " in a directory of its own, creating its share then unlinking it); the script times"
        " itself from the fork to the last child's exit, so neither the launch nor python's"
        " start is in the figure. Gate on is `jaula run` (default backend); medians of"
        f" {next(iter(C['rows'].values()))['runs']} runs.", "",
        "![gated calls per second by callers](../bench/results/gate-calls-per-second.svg)", "")
    rows = []
    b1 = C["rows"]["bare, 1 callers"]["calls_per_second"]
    g1 = C["rows"]["jaula default, 1 callers"]["calls_per_second"]
    for p in C["procs"]:
        b = C["rows"][f"bare, {p} callers"]["calls_per_second"]
        gt = C["rows"][f"jaula default, {p} callers"]["calls_per_second"]
        rows.append([p, f"{b:,.0f}", x(b / b1), f"{gt:,.0f}", x(gt / g1), f"{gt / b * 100:.0f}%"])
    d.table(["callers", "bare calls/s", "bare ÷ 1 caller", "gate calls/s", "gate ÷ 1 caller",
             "gate ÷ bare"], rows)


def issue22_targets(r):
    """Issue 22's targets (point 5: every layer's price), each a ratio against a baseline
    timed in this same run."""
    g = r["groups"]
    rows = []

    def met(ok, miss):
        return "**met**" if ok else f"**missed** ({miss})"

    if "percall" in g:
        per = g["percall"]["per_call_us"]
        us = per["landlock gate vs landlock --no-socket-gate"]
        dflt = per["jaula default vs default --no-socket-gate"]
        rows.append(["per gated call (create or unlink, tmpfs repo): landlock with the gate −"
                     " landlock `--no-socket-gate`", f"≤ {PER_CALL_TARGET_US:.0f} µs",
                     f"{us:.2f} µs (default backend: {dflt:.2f} µs)",
                     met(us <= PER_CALL_TARGET_US, f"{us - PER_CALL_TARGET_US:.1f} µs over")])
    if "realwork" in g:
        for key, w in g["realwork"]["workloads"].items():
            limit = WORK_TARGET_MICRO.get(key, WORK_TARGET)
            if "skipped" in w:
                rows.append([f"{w['title']}: default ÷ bare", f"≤ {x(limit)}", "–",
                             f"not measured: {w['skipped']}"])
                continue
            S = w["rows"]
            bare = S[f"{w['title']}, bare"]["median_ms"]
            dflt = S[f"{w['title']}, jaula default"]["median_ms"]
            ratio = dflt / bare
            rows.append([f"{w['title']}: default ÷ bare", f"≤ {x(limit)}",
                         f"{x(ratio)} ({ms(dflt)} vs {ms(bare)})",
                         met(ratio <= limit, f"{(ratio - limit) * 100:.1f} points over")])
    if "percall" in g:
        C = g["percall"]["curve"]
        cores = r.get("machine", {}).get("nproc") or 2
        p = max(q for q in C["procs"] if q <= max(cores, 1))
        if p > 1:
            rs = C["rows"]
            bare = rs[f"bare, {p} callers"]["calls_per_second"] / rs["bare, 1 callers"]["calls_per_second"]
            gate = (rs[f"jaula default, {p} callers"]["calls_per_second"]
                    / rs["jaula default, 1 callers"]["calls_per_second"])
            rows.append([f"gated calls/s scale with cores as bare does: speedup from 1 to {p} callers"
                         f" ({cores} cores), gate ÷ bare", f"≥ {SCALING_SHARE * 100:.0f}% of bare's",
                         f"gate {x(gate)}, bare {x(bare)} ({gate / bare * 100:.0f}%)",
                         met(gate >= SCALING_SHARE * bare,
                             f"{(SCALING_SHARE - gate / bare) * 100:.0f} points short")])
    if "launch" in g:
        L = g["launch"]["rows"]
        bare = L["bare true"]["median_ms"]
        seed = L["seed bwrap prefix, full"]["median_ms"]
        key = "jaula run, default, full" if "jaula run, default, full" in L else "jaula run, bwrap, full"
        dflt = L[key]["median_ms"]
        rows.append(["launch: default `jaula run -- true` ÷ the seed's bwrap prefix, full home",
                     "≤ 1.00x", f"{x(dflt / seed)} ({ms(dflt)} vs {ms(seed)})",
                     met(dflt / seed <= 1.0, f"{ms(dflt - seed)} slower than the seed")])
        ll = L["jaula run, landlock, full"]["median_ms"]
        rows.append(["launch: `--backend landlock -- true` ÷ bare `true`, full home", "≤ 4.00x",
                     f"{x(ll / bare)} ({ms(ll)})", met(ll / bare <= 4, f"{ms(ll - 4 * bare)} over")])
        floor = L["jaula --version (process floor)"]["median_ms"]
        rows.append(["launch: `jaula --version` ÷ bare `true` (static-pie build)", "≤ 1.30x",
                     f"{x(floor / bare)} ({ms(floor)})", met(floor / bare <= 1.3, f"{ms(floor - 1.3 * bare)} over")])
    if "network" in g:
        N = g["network"]
        ratio = N["connect_tunnel_mib_s"] / N["direct_mib_s"]
        rows.append(["proxy throughput ÷ direct (`CONNECT` tunnel)", "≥ 80%",
                     f"{ratio * 100:.0f}% ({N['connect_tunnel_mib_s']} vs {N['direct_mib_s']} MiB/s)",
                     met(ratio >= 0.8, f"{(0.8 - ratio) * 100:.0f} points short")])
    if not rows:
        return []
    missed = sum(1 for row in rows if "**met**" not in row[3])
    out = ["## Issue 22 targets", "",
           "Every layer's price, each figure a ratio against a baseline timed in this same run"
           " (rows from groups this run did not measure are absent). "
           f"{len(rows) - missed} of {len(rows)} met.", "",
           "| figure | target | measured | verdict |", "|---|---:|---:|---:|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out + [""]


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "bench/results/bench.json"
    root = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    r = json.load(open(path))
    written = plots(r, root)
    lines = render(r, root)
    doc = os.path.join(root, "docs/benchmarks.md")
    kept = ""
    if os.path.exists(doc):
        old = open(doc).read()
        if KEEP in old:
            kept = old.split(KEEP, 1)[1]
        elif "\n## Network proxy" in old:
            kept = "\n" + old[old.index("\n## Network proxy") + 1:]
    text = "\n".join(lines).rstrip() + "\n\n" + KEEP + "\n"
    if kept.strip():
        text += kept if kept.startswith("\n") else "\n" + kept
    else:
        text += "\n<!-- Sections maintained elsewhere (e.g. \"## Network proxy\") go below. -->\n"
    open(doc, "w").write(text)
    print(f"bench: wrote docs/benchmarks.md and {', '.join(written) or 'no plots'}", file=sys.stderr)


if __name__ == "__main__":
    main()
