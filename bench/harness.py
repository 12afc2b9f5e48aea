#!/usr/bin/env python3
"""jaula's benchmark harness, run by bench/run (which installs the tools and builds first).

Every group is timed with hyperfine (`-N`, no shell) in this one run, so the ratios hold
on a noisy machine. Scratch trees live under target/bench-run/, never under /tmp: /tmp is
a writable root of every cage, which would make a scratch home writable and the
comparison meaningless. Results go to bench/results/bench.json; bench/render.py turns
that into docs/benchmarks.md and the plots.

Before anything is timed, every cage is checked to run and to hide the scratch SSH key.
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
import uuid

GROUPS = ["micro", "launch", "gate", "work", "home", "roots", "contract", "network",
          "realwork", "percall"]
HOME_SIZES = [10, 1_000, 10_000, 100_000]
ROOT_COUNTS = [10, 100, 1_000]
CONTRACT_SIZES = [10_000, 100_000]
UID_RANGE = "240000-240999"
# uid allocation: 16 processes at once, each allocating this many Contracts.
UID_PROCS = 16
UID_PER_PROC = 25
# Issue 22's real-work rows: files per untar, python-creates and parallel-touch workload.
WORK_FILES = 20_000
# The per-gated-call figure: creates + unlinks of this many files in one process.
PERCALL_FILES = 20_000
# The gated-calls-per-second curve: this many files split across each number of callers.
CURVE_FILES = 16_000
CURVE_PROCS = [1, 2, 4, 8]

# The window token the cages are given (--token-file); the homes themselves come from
# jaula-scratch-home (crates/testkit/src/bench_home.rs), the one definition of their shape.
TOKEN = ".agents-city/.runtime/broker/w1.token"


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def sh(cmd, **kw):
    """Run argv, fail loudly; return stdout."""
    kw.setdefault("check", True)
    return subprocess.run(cmd, capture_output=True, text=True, **kw).stdout


def put(path, text="x\n"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class Harness:
    def __init__(self, root, quick, only, jaula=None, jaula_dynamic=None, scratch_home=None):
        self.root = root
        self.quick = quick
        self.only = only
        # The jaula measured: bench/run passes the static-pie release build (what a
        # launcher should install: no dynamic loader at each exec), and the ordinary
        # dynamically linked one for the process-floor comparison.
        self.jaula = jaula or os.path.join(root, "target/release/jaula")
        self.jaula_dynamic = jaula_dynamic
        # The scratch homes' maker (jaula-testkit's jaula-scratch-home, built by bench/run).
        self.scratch_home = scratch_home or os.path.join(root, "target/release/jaula-scratch-home")
        self.work = os.path.join(root, "target/bench-run")
        self.true = os.path.realpath(shutil.which("true"))
        self.results = {
            "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "quick": quick,
            "groups": {},
        }
        self.hyperfine_log = None

    def runs(self, n):
        return max(2, n // 10) if self.quick else n

    def files(self, n):
        """A workload's file count: a tenth under --quick, which checks the harness only."""
        return n // 10 if self.quick else n

    # ---------------------------------------------------------------- hyperfine

    def hyperfine(self, name, rows, runs, warmup=3, cwd=None, env=None):
        """Time `rows` = [(label, argv_string, prepare_or_None)] side by side."""
        raw = os.path.join(self.work, f"hf-{name}.json")
        cmd = ["hyperfine", "-N", "--style", "basic", "--runs", str(runs),
               "--warmup", str(warmup), "--export-json", raw]
        if any(p for _, _, p in rows):
            for _, _, p in rows:
                cmd += ["--prepare", p or self.true]
        for label, command, _ in rows:
            cmd += ["-n", label, command]
        log(f"timing {name}: {len(rows)} commands x {runs} runs")
        with open(os.path.join(self.work, "hyperfine.log"), "a") as out:
            out.write(f"\n### {name}\n")
            out.flush()
            subprocess.run(cmd, check=True, cwd=cwd, env=env, stdout=out, stderr=out)
        stats = {}
        for r in json.load(open(raw))["results"]:
            stats[r["command"]] = {
                "median_ms": r["median"] * 1e3,
                "mean_ms": r["mean"] * 1e3,
                "stddev_ms": (r["stddev"] or 0) * 1e3,
                "min_ms": r["min"] * 1e3,
                "max_ms": r["max"] * 1e3,
                "user_ms": r["user"] * 1e3,
                "system_ms": r["system"] * 1e3,
                "runs": len(r["times"]),
            }
        for label, command, prepare in rows:
            stats[label]["command"] = command
            if prepare:
                stats[label]["prepare"] = prepare
        return stats

    # ---------------------------------------------------------------- scratch trees

    def real_home(self, home):
        """A real-sized home: every default secret, the usual state and caches, a few
        hundred top-level entries and a few thousand beneath."""
        sh([self.scratch_home, "real-sized", home])

    def minimal_home(self, home):
        """The token file the flags name and an empty src/repo: no secret to seal."""
        sh([self.scratch_home, "minimal", home])

    def count(self, path, top=False):
        if top:
            return len(os.listdir(path))
        return sum(len(d) + len(f) for _, d, f in os.walk(path))

    def cage_py_argv(self, home, repo):
        """agents-city's own bubblewrap prefix for this home, from its cage.py extracted
        out of the diff in the seeds directory at run time (as
        crates/cli/tests/all/seed_compat.rs does; never copied into the project)."""
        env = {"PATH": os.environ["PATH"], "HOME": home, "CITY_CAGE_BWRAP": "1"}
        out = sh(["python3", os.path.join(self.cage_py_dir, "cage.py"), "line", "--repo", repo,
                  "--home", home, "--token-file", os.path.join(home, TOKEN)],
                 env=env, cwd=repo).strip()
        argv = shlex.split(out)
        if not argv or os.path.basename(argv[0]) != "bwrap":
            raise SystemExit(f"bench: agents-city's cage.py printed no bwrap prefix: {out}")
        return argv

    def extract_cage_py(self):
        diff = None
        for d in [os.environ.get("JAULA_SEEDS"), os.path.join(self.root, "../shared/seeds"),
                  os.path.join(self.root, "../../shared/seeds")]:
            if d and os.path.isfile(os.path.join(d, "000_10278aa537b303a1.txt")):
                diff = os.path.join(d, "000_10278aa537b303a1.txt")
                break
        if diff is None:
            raise SystemExit("bench: the seeds are absent (set JAULA_SEEDS to their directory)")
        self.cage_py_dir = os.path.join(self.work, "agents-city")
        os.makedirs(self.cage_py_dir, exist_ok=True)
        lines = open(diff).read().splitlines()
        start = next(i for i, l in enumerate(lines) if l.startswith("@@"))
        body = [l[1:] for l in lines[start + 1:] if l.startswith("+")]
        put(os.path.join(self.cage_py_dir, "cage.py"), "\n".join(body) + "\n")
        # The `rutas` module cage.py imports (see PATH_HELPERS).
        put(os.path.join(self.cage_py_dir, "rutas.py"), PATH_HELPERS)

    def jaula_cmd(self, backend, home, repo, extra=(), cmd=None):
        argv = [self.jaula, "run", "--backend", backend, "--repo", repo, "--home", home,
                "--token-file", os.path.join(home, TOKEN), *extra, "--", *(cmd or [self.true])]
        return shlex.join(argv)

    def policy_paths(self, home, repo):
        """Sealed and writable paths of jaula's policy, as its bubblewrap argv shows them:
        what firejail is given for the same policy."""
        out = json.loads(sh([self.jaula, "render", "bwrap", "--json", "--home", home,
                             "--repo", repo, "--token-file", os.path.join(home, TOKEN)]))
        argv = out["argv"]
        sealed, writable = [], []
        for i, a in enumerate(argv):
            if a == "--tmpfs":
                sealed.append(argv[i + 1])
            elif a == "--ro-bind" and argv[i + 1] == "/dev/null":
                sealed.append(argv[i + 2])
            elif a in ("--bind", "--bind-try") and os.path.exists(argv[i + 1]):
                writable.append(argv[i + 1])
        return sorted(set(sealed)), sorted(set(writable))

    def firejail_full(self, home, repo):
        sealed, writable = self.policy_paths(home, repo)
        argv = ["firejail", "--noprofile", "--quiet", "--read-only=/"]
        argv += [f"--read-write={w}" for w in writable]
        argv += [f"--blacklist={s}" for s in sealed]
        return argv + [self.true]

    def check_caged(self, label, command_true, home):
        """The caged command runs, and the scratch SSH key is out of its reach."""
        argv = shlex.split(command_true)
        r = subprocess.run(argv, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"bench: {label} does not run: {command_true}\n{r.stderr}")
        probe = argv[:-1] + ["/bin/cat", os.path.join(home, ".ssh/id_ed25519")]
        r = subprocess.run(probe, capture_output=True, text=True)
        if "secret" in r.stdout:
            raise SystemExit(f"bench: the SSH key is readable under {label}")

    # ---------------------------------------------------------------- groups

    def group_micro(self):
        crit = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(self.root, "target"),
                            "criterion")
        shutil.rmtree(crit, ignore_errors=True)
        log("criterion micro-benchmarks (cargo bench -p jaula-bench)")
        args = ["cargo", "bench", "-q", "-p", "jaula-bench", "--bench", "micro", "--"]
        if self.quick:
            args += ["--warm-up-time", "0.2", "--measurement-time", "0.5"]
        with open(os.path.join(self.work, "criterion.log"), "w") as out:
            subprocess.run(args, check=True, cwd=self.root, stdout=out, stderr=out)
        micro = {}
        for group in sorted(os.listdir(crit)):
            gdir = os.path.join(crit, group)
            for case in sorted(os.listdir(gdir)):
                est = os.path.join(gdir, case, "new/estimates.json")
                bench = os.path.join(gdir, case, "new/benchmark.json")
                if not os.path.isfile(est):
                    continue
                e = json.load(open(est))
                b = json.load(open(bench))
                micro[f"{group}/{case}"] = {
                    "group": b.get("group_id", group),
                    "case": b.get("value_str") or b.get("function_id") or case,
                    "median_ns": e["median"]["point_estimate"],
                    "mean_ns": e["mean"]["point_estimate"],
                    "median_ci_ns": [e["median"]["confidence_interval"]["lower_bound"],
                                     e["median"]["confidence_interval"]["upper_bound"]],
                }
        self.results["groups"]["micro"] = micro

    def group_launch(self):
        empty = os.path.join(self.work, "launch/empty-home")
        full = os.path.join(self.work, "launch/full-home")
        for h in (empty, full):
            shutil.rmtree(h, ignore_errors=True)
        self.minimal_home(empty)
        self.real_home(full)
        rows = [("bare true", self.true, None),
                ("jaula --version (process floor)", shlex.join([self.jaula, "--version"]), None)]
        if self.jaula_dynamic and os.path.isfile(self.jaula_dynamic):
            rows.append(("jaula --version, dynamically linked build",
                         shlex.join([self.jaula_dynamic, "--version"]), None))
        homes = {}
        for tag, home in (("minimal", empty), ("full", full)):
            repo = os.path.join(home, "src/repo")
            cmds = [
                (f"jaula run, landlock, {tag}", self.jaula_cmd("landlock", home, repo)),
                (f"jaula run, bwrap, {tag}", self.jaula_cmd("bwrap", home, repo)),
                (f"seed bwrap prefix, {tag}", shlex.join(self.cage_py_argv(home, repo) + [self.true])),
            ]
            if tag == "minimal":
                cmds.append((f"firejail --noprofile, {tag}",
                             shlex.join(["firejail", "--noprofile", "--quiet", self.true])))
            else:
                cmds.append((f"firejail --noprofile + policy, {tag}",
                             shlex.join(self.firejail_full(home, repo))))
            for label, c in cmds:
                if tag == "full":
                    self.check_caged(label, c, home)
                rows.append((label, c, None))
            homes[tag] = {"entries": self.count(home), "top_level_entries": self.count(home, True)}
        stats = self.hyperfine("launch", rows, self.runs(100), warmup=10, cwd=full)
        self.results["groups"]["launch"] = {"homes": homes, "rows": stats}

    def group_gate(self):
        """The socket gate: launch with and without it, and a caged program making 2,000
        connects to a unix socket it bound itself, with and without it, in one run."""
        home = os.path.join(self.work, "gate/home")
        shutil.rmtree(os.path.dirname(home), ignore_errors=True)
        repo = os.path.join(home, "src/repo")
        self.minimal_home(home)
        client = os.path.join(repo, "connects.py")
        put(client, CONNECTS)
        writer = os.path.join(repo, "files.py")
        put(writer, FILES)
        py = shutil.which("python3")
        rows = [("bare true", self.true, None)]
        for backend in ("landlock", "bwrap"):
            for tag, extra in (("gate", ()), ("no gate", ("--no-socket-gate",))):
                rows.append((f"jaula run {backend}, {tag}: true",
                             self.jaula_cmd(backend, home, repo, extra), None))
        rows.append(("python3, 2000 connects, uncaged", shlex.join([py, client, "2000"]), None))
        rows.append(("python3, 2000 files, uncaged", shlex.join([py, writer, "2000"]), None))
        for backend in ("landlock", "bwrap"):
            for tag, extra in (("gate", ()), ("no gate", ("--no-socket-gate",))):
                rows.append((f"jaula run {backend}, {tag}: 2000 connects",
                             self.jaula_cmd(backend, home, repo, extra, [py, client, "2000"]), None))
                rows.append((f"jaula run {backend}, {tag}: 2000 files",
                             self.jaula_cmd(backend, home, repo, extra, [py, writer, "2000"]), None))
        stats = self.hyperfine("gate", rows, self.runs(30), warmup=3, cwd=repo)
        per = {}
        for backend in ("landlock", "bwrap"):
            g = stats[f"jaula run {backend}, gate: 2000 connects"]["median_ms"]
            n = stats[f"jaula run {backend}, no gate: 2000 connects"]["median_ms"]
            gl = stats[f"jaula run {backend}, gate: true"]["median_ms"]
            nl = stats[f"jaula run {backend}, no gate: true"]["median_ms"]
            fg = stats[f"jaula run {backend}, gate: 2000 files"]["median_ms"]
            fn = stats[f"jaula run {backend}, no gate: 2000 files"]["median_ms"]
            per[backend] = {
                "launch_ratio": gl / nl,
                "connects_ratio": g / n,
                "per_connect_us": (g - n - (gl - nl)) / 2000 * 1e3,
                "files_ratio": fg / fn,
                # Each file is two gated calls: its creating open and its unlink.
                "per_file_call_us": (fg - fn - (gl - nl)) / 4000 * 1e3,
            }
        self.results["groups"]["gate"] = {"rows": stats, "derived": per}

    def group_work(self):
        home = os.path.join(self.work, "work/home")
        big = os.path.join(home, "src/big")
        done = os.path.join(self.work, "work/big-repo-complete")
        # The 50,000-file repository takes a minute to build: kept from an earlier run
        # when that run finished building it.
        if not os.path.exists(done):
            shutil.rmtree(home, ignore_errors=True)
        self.real_home(home)
        env = dict(os.environ, HOME=home)
        out = {}

        # git status in a repository of 50,000 files.
        if not os.path.exists(done):
            log("building a 50,000-file git repository")
            for i in range(50_000):
                put(os.path.join(big, f"d{i // 500:03}/s{(i // 50) % 10}/f{i:05}.txt"), f"{i}\n")
            g = ["git", "-C", big, "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
            sh(["git", "init", "-q", big])
            sh(g + ["add", "-A"])
            sh(g + ["commit", "-q", "-m", "bench"])
            put(done, "")
        git = ["git", "-C", big, "status", "--porcelain"]
        rows = [("git status, bare", shlex.join(git), None)]
        for b in ("landlock", "bwrap"):
            rows.append((f"git status, {b}", self.jaula_cmd(b, home, big, cmd=git), None))
        out["git_status"] = {"files": 50_000,
                             "rows": self.hyperfine("git-status", rows, self.runs(15), 3, big, env)}

        # find over /usr.
        # Directories only root can search (0700 polkit rules) are pruned: the cage drops
        # CAP_DAC_OVERRIDE, so both sides must walk the same tree.
        find = ["find", "/usr", "-xdev", "-type", "d", "!", "-perm", "-o=rx", "-prune", "-o", "-print"]
        usr_entries = len(sh(find).splitlines())
        rows = [("find /usr, bare", shlex.join(find), None)]
        for b in ("landlock", "bwrap"):
            rows.append((f"find /usr, {b}", self.jaula_cmd(b, home, home + "/src/repo", cmd=find), None))
        out["find_usr"] = {"entries": usr_entries,
                           "rows": self.hyperfine("find-usr", rows, self.runs(8), 2, None, env)}

        # Building a small Rust crate, offline, from clean.
        crate = os.path.join(home, "src/smallcrate")
        self.small_crate(crate)
        sysroot = sh(["rustc", "--print", "sysroot"]).strip()
        cargo = os.path.join(sysroot, "bin/cargo")
        cenv = dict(env, CARGO_HOME=os.path.join(home, ".cargo"),
                    RUSTC=os.path.join(sysroot, "bin/rustc"), CARGO_TERM_QUIET="true")
        cenv.pop("RUSTUP_TOOLCHAIN", None)
        # A build dir set for the benchmark's own cargo lies outside the cage's writable set.
        cenv.pop("CARGO_TARGET_DIR", None)
        clean = shlex.join(["rm", "-rf", os.path.join(crate, "target")])
        build = [cargo, "build", "--offline", "--manifest-path", os.path.join(crate, "Cargo.toml")]
        rows = [("cargo build, bare", shlex.join(build), clean)]
        for b in ("landlock", "bwrap"):
            c = self.jaula_cmd(b, home, crate, cmd=build)
            subprocess.run(shlex.split(clean))
            r = subprocess.run(shlex.split(c), env=cenv, capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"bench: cargo build fails under {b}:\n{r.stderr}")
            rows.append((f"cargo build, {b}", c, clean))
        out["cargo_build"] = {"rows": self.hyperfine("cargo-build", rows, self.runs(6), 1, crate, cenv)}
        self.results["groups"]["work"] = out

    def small_crate(self, crate):
        """A dependency-free crate of ~3,000 lines: a debug build of a few seconds."""
        shutil.rmtree(crate, ignore_errors=True)
        put(os.path.join(crate, "Cargo.toml"),
            '[package]\nname = "smallcrate"\nversion = "0.1.0"\nedition = "2021"\n\n[workspace]\n')
        mods = []
        for m in range(20):
            body = []
            for f in range(30):
                body.append(
                    f"pub fn f{f}(v: &[u64]) -> u64 {{\n"
                    f"    let mut acc = {f}u64;\n"
                    f"    for (i, x) in v.iter().enumerate() {{ acc = acc.wrapping_mul(31).wrapping_add(x ^ i as u64); }}\n"
                    f"    let s: String = v.iter().map(|x| format!(\"{{x:{m}}}\")).collect();\n"
                    f"    acc.wrapping_add(s.len() as u64)\n}}\n")
            put(os.path.join(crate, f"src/m{m}.rs"), "\n".join(body))
            mods.append(f"mod m{m};")
        calls = " + ".join(f"m{m}::f{m}(&v)" for m in range(20))
        put(os.path.join(crate, "src/main.rs"),
            "\n".join(mods) + f"\nfn main() {{\n    let v: Vec<u64> = (0..100).collect();\n"
            f"    println!(\"{{}}\", {calls});\n}}\n")

    def scaling_home(self, n):
        """A home with exactly `n` top-level entries: ~/.ssh (sealed, holding the key),
        ~/.agents-city (the token), ~/src (holding the repo), and the rest, one in four a
        directory; kept from an earlier run when it has them."""
        home = os.path.join(self.work, f"homes/h{n}")
        sh([self.scratch_home, "entries", str(n), home])
        return home

    def group_home(self):
        out = {}
        runs = {10: 40, 1_000: 30, 10_000: 15, 100_000: 5}
        for n in HOME_SIZES:
            home = self.scaling_home(n)
            repo = os.path.join(home, "src/repo")
            rows = []
            for b in ("landlock", "bwrap"):
                c = self.jaula_cmd(b, home, repo)
                self.check_caged(f"{b} with {n} home entries", c, home)
                rows.append((b, c, None))
            out[str(n)] = self.hyperfine(f"home-{n}", rows, self.runs(runs[n]), 2, repo)
        # System calls per launch (repeatable, unlike time): the cost per extra home entry
        # is read against the floor of three (open, landlock_add_rule, close).
        calls = {}
        if shutil.which("strace"):
            for n in (10, 10_000):
                home = self.scaling_home(n)
                repo = os.path.join(home, "src/repo")
                calls[str(n)] = self.syscalls(self.jaula_cmd("landlock", home, repo), repo)
        self.results["groups"]["home"] = {"sizes": HOME_SIZES, "rows": out, "syscalls": calls}

    def syscalls(self, command, cwd):
        """`strace -f -c` of one run: calls per system call name, and the total."""
        summary = os.path.join(self.work, "strace-summary.txt")
        subprocess.run(["strace", "-f", "-c", "-o", summary, *shlex.split(command)],
                       check=True, cwd=cwd, capture_output=True)
        counts = {}
        for line in open(summary):
            parts = line.split()
            if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
                counts[parts[-1]] = int(parts[3])
        return {"total": sum(counts.values()), "by_call": counts}

    def group_network(self):
        """The proxy against direct loopback (crates/proxy/examples/bench.rs), release."""
        log("network proxy throughput and latency (cargo run --release --example bench)")
        out = sh(["cargo", "run", "--quiet", "--release", "-p", "jaula-proxy", "--example", "bench"],
                 cwd=self.root)
        self.results["groups"]["network"] = json.loads(out)

    def group_roots(self):
        home = self.scaling_home(10)
        repo = os.path.join(home, "src/repo")
        base = os.path.join(self.work, "roots")
        out = {}
        runs = {10: 30, 100: 20, 1_000: 8}
        for n in ROOT_COUNTS:
            extra = []
            for i in range(n // 2):
                d = os.path.join(base, f"s{i:04}")
                os.makedirs(d, exist_ok=True)
                put(os.path.join(d, "secret"), "secret\n")
                extra.append(f"--deny={d}")
            for i in range(n - n // 2):
                d = os.path.join(base, f"w{i:04}")
                os.makedirs(d, exist_ok=True)
                extra.append(f"--allow-write={d}")
            rows = []
            for b in ("landlock", "bwrap"):
                c = self.jaula_cmd(b, home, repo, extra=extra)
                r = subprocess.run(shlex.split(c)[:-1] + ["/bin/cat", os.path.join(base, "s0000/secret")],
                                   capture_output=True, text=True)
                if "secret" in r.stdout:
                    raise SystemExit(f"bench: a --deny root is readable under {b}")
                rows.append((b, c, None))
            out[str(n)] = self.hyperfine(f"roots-{n}", rows, self.runs(runs[n]), 2, repo)
        self.results["groups"]["roots"] = {"counts": ROOT_COUNTS, "rows": out}

    def group_contract(self):
        if os.geteuid() != 0:
            self.results["groups"]["contract"] = {"skipped": "needs root"}
            log("contract group skipped: needs root")
            return
        base = os.path.join(self.work, "contract")
        if os.path.ismount(base):
            subprocess.run(["umount", base], check=True)
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(base)
        # On a tmpfs: a trial run on this VM's shared ext4 disk spent most of its time
        # waiting for other tenants' I/O (one 100,000-file wipe took 20 s, the next 121 s),
        # which says nothing about jaula. On a tmpfs both sides do the same syscalls with
        # no disk behind them, so the comparison is of the walk itself.
        fs = "tmpfs"
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6g,mode=0755", "jaula-bench", base]).returncode != 0:
            fs = "the scratch disk (tmpfs mount refused)"
        try:
            self._contract(base)
        finally:
            if os.path.ismount(base):
                subprocess.run(["umount", base], check=False)
        self.results["groups"]["contract"]["filesystem"] = fs

    def _contract(self, base):
        croot, state = os.path.join(base, "root"), os.path.join(base, "state")
        os.makedirs(croot)
        os.makedirs(state)
        glob = [self.jaula, "contract", "--root", croot, "--state-dir", state,
                "--uid-range", UID_RANGE]
        scripts = os.path.join(base, "bin")
        os.makedirs(scripts)
        out = {}
        for n in CONTRACT_SIZES:
            tpl = os.path.join(base, f"tpl{n}")
            log(f"building a {n}-file tree")
            for i in range(n):
                put(os.path.join(tpl, f"d{i // 1000:03}/s{(i // 100) % 10}/f{i:06}.txt"), "x\n")
            contract, record = str(uuid.uuid4()), str(uuid.uuid4())
            ws = sh(glob + ["prepare", contract, record]).strip()
            sh(["cp", "-a", tpl + "/.", ws])
            uid = json.loads(sh(glob + ["uid", contract, "--json"]))["uid"]
            # Hand-over against chown -R: the tree goes back to the runner before each run.
            reset = os.path.join(scripts, f"reset{n}.sh")
            put(reset, f"#!/bin/sh\nexec chown -R -h 0:0 {shlex.quote(ws)}\n")
            reset_cmd = shlex.join(["sh", reset])
            rows = [("jaula contract handover", shlex.join(glob + ["handover", contract, ws]), reset_cmd),
                    ("chown -R", shlex.join(["chown", "-R", "-h", f"{uid}:{uid}", ws]), reset_cmd)]
            runs = self.runs(10 if n <= 10_000 else 4)
            handover = self.hyperfine(f"handover-{n}", rows, runs, 1)
            owner = os.lstat(os.path.join(ws, "d000/s0/f000000.txt")).st_uid
            if owner != uid:
                raise SystemExit(f"bench: hand-over left {owner}, not {uid}")
            # Wipe against rm -rf: a fresh Contract tree before each run.
            fill = os.path.join(scripts, f"fill{n}.sh")
            put(fill, "#!/bin/sh\nset -e\n"
                f"ws=$({shlex.join(glob)} prepare {contract} {record})\n"
                f"cp -a {shlex.quote(tpl)}/. \"$ws\"\n")
            fill_cmd = shlex.join(["sh", fill])
            rows = [("jaula contract wipe", shlex.join(glob + ["wipe", contract]), fill_cmd),
                    ("rm -rf", shlex.join(["rm", "-rf", os.path.join(croot, contract)]), fill_cmd)]
            wipe = self.hyperfine(f"wipe-{n}", rows, runs, 0)
            if os.path.exists(os.path.join(croot, contract)):
                raise SystemExit("bench: the Contract's tree survived its wipe")
            out[str(n)] = {"handover": handover, "wipe": wipe}
            shutil.rmtree(tpl)

        # uid allocation: 16 processes at once against one state dir, and one alone.
        ustate = os.path.join(base, "uid-state")
        alloc = os.path.join(scripts, "alloc.sh")
        put(alloc, "#!/bin/bash\n# alloc.sh PROCS PER_PROC: allocate PROCS*PER_PROC Contracts.\n"
            "set -u\npids=()\n"
            "for p in $(seq \"$1\"); do\n"
            "  ( for i in $(seq \"$2\"); do\n"
            f"      {shlex.join([self.jaula, 'contract', '--root', croot, '--state-dir', ustate, '--uid-range', UID_RANGE])} uid \"u-$p-$i\" >/dev/null || exit 1\n"
            "    done ) &\n  pids+=($!)\ndone\nrc=0\n"
            "for pid in \"${pids[@]}\"; do wait \"$pid\" || rc=1; done\nexit $rc\n")
        fresh = os.path.join(scripts, "fresh.sh")
        put(fresh, f"#!/bin/sh\nrm -rf {shlex.quote(ustate)} && mkdir -p {shlex.quote(ustate)}\n")
        total = UID_PROCS * UID_PER_PROC
        rows = [(f"{UID_PROCS} processes x {UID_PER_PROC}", shlex.join(["bash", alloc, str(UID_PROCS), str(UID_PER_PROC)]), shlex.join(["sh", fresh])),
                (f"1 process x {total}", shlex.join(["bash", alloc, "1", str(total)]), shlex.join(["sh", fresh]))]
        uids = self.hyperfine("uid-alloc", rows, self.runs(5), 0)
        for label, s in uids.items():
            s["allocations"] = total
            s["per_second"] = total / (s["median_ms"] / 1e3)
        # The map after the last run: every allocation distinct.
        self.results["groups"]["contract"] = {"trees": out, "uid_alloc": uids,
                                              "uid_range": UID_RANGE}

    # ---------------------------------------------------------------- issue 22: every layer's price

    def layers(self, home, repo, seed=True):
        """The cages issue 22 prices, each as an argv prefix ([] for bare): the seed's own
        bubblewrap prefix, jaula's default (no --backend: the config's, else auto), Landlock
        alone, and each of jaula's two without the gate."""
        def jaula(backend, *extra):
            argv = [self.jaula, "run"]
            if backend:
                argv += ["--backend", backend]
            return argv + ["--repo", repo, "--home", home, "--token-file",
                           os.path.join(home, TOKEN), "--quiet", *extra, "--"]
        return [("bare", [])] + \
            ([("seed bwrap prefix", self.cage_py_argv(home, repo))] if seed else []) + [
                ("jaula default", jaula(None)),
                ("default --no-socket-gate", jaula(None, "--no-socket-gate")),
                ("landlock", jaula("landlock")),
                ("landlock --no-socket-gate", jaula("landlock", "--no-socket-gate"))]

    def group_realwork(self):
        """Real work in the cage's repo, with a credential-filled home: every layer side by
        side in one hyperfine run per workload, so the ratios hold on a noisy machine."""
        base = os.path.join(self.work, "realwork")
        home = os.path.join(base, "home")
        repo = os.path.join(home, "src/repo")
        data = os.path.join(base, "data")
        os.makedirs(data, exist_ok=True)
        # The home is kept between runs (the maker only adds what is missing), so the npm
        # cache filled from the registry once stays filled.
        self.real_home(home)
        layers = self.layers(home, repo)
        for tag, prefix in layers[1:]:
            self.check_caged(tag, shlex.join(prefix + [self.true]), home)
        sysroot = sh(["rustc", "--print", "sysroot"]).strip()
        env = dict(os.environ, HOME=home, CARGO_HOME=os.path.join(home, ".cargo"),
                   RUSTC=os.path.join(sysroot, "bin/rustc"), CARGO_TERM_QUIET="true",
                   npm_config_update_notifier="false", npm_config_audit="false",
                   npm_config_fund="false")
        env.pop("RUSTUP_TOOLCHAIN", None)
        # A build dir set for the benchmark's own cargo lies outside the cage's writable set.
        env.pop("CARGO_TARGET_DIR", None)
        runs5, runs3 = self.runs(5), self.runs(3)
        nfiles = self.files(WORK_FILES)
        # (key, title, argv, prepare, runs, made: a path the command leaves, or None), or
        # (key, title, reason) for a row that cannot run here.
        workloads = []

        npm = shutil.which("npm")
        proj = os.path.join(repo, "npm")
        npm_title = "npm install --offline (express + lodash)"
        if not npm:
            workloads.append(("npm_install", npm_title, "npm is not installed"))
        elif not self.npm_project(proj, env):
            workloads.append(("npm_install", npm_title,
                              "the npm cache could not be filled from the registry"))
        else:
            workloads.append(("npm_install", npm_title,
                              [npm, "install", "--offline", "--prefix", proj],
                              shlex.join(["rm", "-rf", os.path.join(proj, "node_modules")]),
                              runs5, os.path.join(proj, "node_modules/express/package.json")))

        src = os.path.join(data, "jaula.git")
        shutil.rmtree(src, ignore_errors=True)
        sh(["git", "clone", "-q", "--bare", "--no-local", self.root, src])
        clone = os.path.join(repo, "clone")
        workloads.append(("git_clone", "git clone --no-local (this repository)",
                          ["git", "clone", "-q", "--no-local", src, clone],
                          shlex.join(["rm", "-rf", clone]), runs5, os.path.join(clone, "Cargo.toml")))

        tar = os.path.join(data, f"files{nfiles}.tar")
        if not os.path.isfile(tar):
            log(f"building a {nfiles:,}-file tarball")
            tree = os.path.join(data, "untar")
            shutil.rmtree(tree, ignore_errors=True)
            for i in range(nfiles):
                put(os.path.join(tree, f"d{i // 1000:02}/f{i:05}"), "x\n")
            sh(["tar", "-cf", tar + ".part", "-C", data, "untar"])
            os.rename(tar + ".part", tar)
            shutil.rmtree(tree)
        untar = os.path.join(repo, "untar")
        workloads.append(("untar", f"untar {nfiles:,} files, then rm -rf",
                          ["sh", "-c", f"tar -xf {shlex.quote(tar)} && rm -rf untar"],
                          shlex.join(["rm", "-rf", untar]), runs5, None))

        creates = os.path.join(data, "creates.py")
        put(creates, CREATES)
        workloads.append(("python_creates", f"python {nfiles:,} creates, then rm -rf",
                          ["sh", "-c", f"python3 {shlex.quote(creates)} pyfiles {nfiles} && rm -rf pyfiles"],
                          shlex.join(["rm", "-rf", os.path.join(repo, "pyfiles")]), runs5, None))

        names = os.path.join(data, f"touch-names{nfiles}")
        per = nfiles // 4
        put(names, "".join(f"touch/d{i // per}/f{i:05}\n" for i in range(nfiles)))
        workloads.append(("parallel_touch", f"4 parallel xargs touch of {nfiles:,} files, then rm -rf",
                          ["sh", "-c", "mkdir -p touch/d0 touch/d1 touch/d2 touch/d3 && "
                           f"xargs -P 4 -n {per} touch < {shlex.quote(names)} && rm -rf touch"],
                          shlex.join(["rm", "-rf", os.path.join(repo, "touch")]), runs5, None))

        crate = os.path.join(repo, "serdecrate")
        vendor = os.path.join(data, "vendor")
        cargo_title = "cargo build --offline (serde + serde_json)"
        if self.serde_crate(crate, vendor, env):
            workloads.append(("cargo_build", cargo_title,
                              [os.path.join(sysroot, "bin/cargo"), "build", "--offline",
                               "--manifest-path", os.path.join(crate, "Cargo.toml"), *self.vendored(vendor)],
                              shlex.join(["rm", "-rf", os.path.join(crate, "target")]), runs3,
                              os.path.join(crate, "target/debug/serdecrate")))
        else:
            workloads.append(("cargo_build", cargo_title, "serde and serde_json could not be vendored"))

        out = {"layers": [tag for tag, _ in layers], "files": nfiles, "workloads": {}}
        for key, title, *how in workloads:
            if len(how) == 1:
                log(f"realwork: the {title} row is skipped: {how[0]}")
                out["workloads"][key] = {"title": title, "skipped": how[0]}
                continue
            argv, prepare, runs, made = how
            rows = []
            for tag, prefix in layers:
                # Each cage runs the work once, untimed, and leaves what it should.
                subprocess.run(shlex.split(prepare), check=True)
                r = subprocess.run(prefix + argv, cwd=repo, env=env, capture_output=True, text=True)
                if r.returncode != 0 or (made and not os.path.exists(made)):
                    raise SystemExit(f"bench: {title} fails under {tag} (exit {r.returncode}):\n{r.stderr}")
                rows.append((f"{title}, {tag}", shlex.join(prefix + argv), prepare))
            # No warm-up: each cage has just run the work once, untimed, above.
            stats = self.hyperfine(f"realwork-{key}", rows, runs, 0, repo, env)
            out["workloads"][key] = {"title": title, "rows": stats}
            subprocess.run(shlex.split(prepare), check=True)
        self.results["groups"]["realwork"] = out

    def npm_project(self, proj, env):
        """express + lodash with a lockfile, the home's npm cache filled from the registry
        once (outside the timing); True when `npm install --offline` can then work."""
        lock = os.path.join(proj, "package-lock.json")
        if os.path.isfile(lock) and os.path.isfile(os.path.join(proj, ".cache-filled")):
            return True
        shutil.rmtree(proj, ignore_errors=True)
        put(os.path.join(proj, "package.json"),
            json.dumps({"name": "bench-npm", "version": "1.0.0", "private": True,
                        "dependencies": {"express": "^4", "lodash": "^4"}}, indent=1) + "\n")
        log("filling the npm cache (express + lodash) from the registry, once")
        r = subprocess.run(["npm", "install", "--prefix", proj], env=env, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.isfile(lock):
            log(f"npm install (online) failed:\n{r.stderr}")
            return False
        shutil.rmtree(os.path.join(proj, "node_modules"))
        put(os.path.join(proj, ".cache-filled"), "")
        return True

    def serde_crate(self, crate, vendor, env):
        """A crate depending on serde + serde_json, its sources vendored once (from the
        cargo registry cache, else the registry): the timed build is `--offline`."""
        shutil.rmtree(crate, ignore_errors=True)
        put(os.path.join(crate, "Cargo.toml"),
            '[package]\nname = "serdecrate"\nversion = "0.1.0"\nedition = "2021"\n\n'
            '[dependencies]\nserde = "1"\nserde_json = "1"\n\n[workspace]\n')
        put(os.path.join(crate, "src/main.rs"),
            "fn main() {\n    let v: serde_json::Value = serde_json::from_str(\"[1, 2, 3]\").unwrap_or_default();\n"
            "    println!(\"{v}\");\n}\n")
        lock = os.path.join(os.path.dirname(vendor), "serdecrate.lock")
        if os.path.isfile(lock) and os.path.isdir(vendor):
            shutil.copy(lock, os.path.join(crate, "Cargo.lock"))
        else:
            # The host's own cargo home holds the registry cache; the cage's never needs it.
            host = dict(env)
            for k in ("HOME", "CARGO_HOME"):
                host[k] = os.environ.get(k, "")
                if not host[k]:
                    del host[k]
            shutil.rmtree(vendor, ignore_errors=True)
            ok = False
            for offline in (["--offline"], []):
                r = subprocess.run(["cargo", "vendor", *offline, "--manifest-path",
                                    os.path.join(crate, "Cargo.toml"), vendor],
                                   env=host, capture_output=True, text=True)
                if r.returncode == 0:
                    ok = True
                    break
            if not ok:
                log(f"cargo vendor failed:\n{r.stderr}")
                return False
            shutil.copy(os.path.join(crate, "Cargo.lock"), lock)
        return True

    @staticmethod
    def vendored(vendor):
        """cargo's flags to take crates.io's sources from `vendor` (given on the command
        line: cargo reads a config file from its working directory, the repo, not the
        crate's)."""
        return ["--config", 'source.crates-io.replace-with="vendored-sources"',
                "--config", f"source.vendored-sources.directory={json.dumps(vendor)}"]

    def group_percall(self):
        """The price of one gated call, and gated calls per second by number of callers,
        on a tmpfs repo (no disk behind the calls: what is timed is the gate)."""
        base = os.path.join(self.work, "percall")
        if os.path.ismount(base):
            subprocess.run(["umount", base], check=True)
        shutil.rmtree(base, ignore_errors=True)
        os.makedirs(base)
        fs = "tmpfs"
        if os.geteuid() != 0 or subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=1g,mode=0755", "jaula-bench", base]).returncode != 0:
            fs = "the scratch disk (tmpfs mount refused)"
        try:
            self._percall(base)
        finally:
            if os.path.ismount(base):
                subprocess.run(["umount", base], check=False)
        self.results["groups"]["percall"]["filesystem"] = fs

    def _percall(self, base):
        home = os.path.join(base, "home")
        repo = os.path.join(home, "src/repo")
        self.minimal_home(home)
        script = os.path.join(base, "calls.py")
        put(script, CALLS)
        py = shutil.which("python3")
        layers = self.layers(home, repo, seed=False)
        n = self.files(PERCALL_FILES)
        cfiles = self.files(CURVE_FILES)
        rows = []
        for tag, prefix in layers:
            rows.append((f"{tag}: true", shlex.join(prefix + [self.true]), None))
            rows.append((f"{tag}: {n} creates + {n} unlinks",
                         shlex.join(prefix + [py, script, "1", str(n), "calls"]), None))
        for _, c, _ in rows:
            subprocess.run(shlex.split(c), check=True, cwd=repo, capture_output=True)
        stats = self.hyperfine("percall", rows, self.runs(10), 2, repo)

        def per_call(gated, ungated):
            work = stats[f"{gated}: {n} creates + {n} unlinks"]["median_ms"] - \
                stats[f"{ungated}: {n} creates + {n} unlinks"]["median_ms"]
            launch = stats[f"{gated}: true"]["median_ms"] - stats[f"{ungated}: true"]["median_ms"]
            return (work - launch) / (2 * n) * 1e3

        derived = {
            # The issue's figure: the gate alone, Landlock on both sides.
            "landlock gate vs landlock --no-socket-gate": per_call("landlock", "landlock --no-socket-gate"),
            "jaula default vs default --no-socket-gate": per_call("jaula default", "default --no-socket-gate"),
            "jaula default vs bare": per_call("jaula default", "bare"),
            "landlock --no-socket-gate vs bare": per_call("landlock --no-socket-gate", "bare"),
        }

        # The curve: F files split across P processes, each creating then unlinking its
        # share; the script times its own work (after the fork), so launch and python's
        # start stay out of the figure.
        curve_rows, logs = [], {}
        for tag, prefix in layers:
            if tag not in ("bare", "jaula default"):
                continue
            for p in CURVE_PROCS:
                label = f"{tag}, {p} callers"
                log_file = os.path.join(repo, f"curve-{'bare' if tag == 'bare' else 'gate'}-{p}.times")
                logs[label] = log_file
                curve_rows.append((label, shlex.join(prefix + [py, script, str(p), str(cfiles // p),
                                                              f"curve{p}", log_file]), None))
        for _, c, _ in curve_rows:
            subprocess.run(shlex.split(c), check=True, cwd=repo, capture_output=True)
        for f in logs.values():
            open(f, "w").close()
        warmup = 1
        cstats = self.hyperfine("gate-curve", curve_rows, self.runs(5), warmup, repo)
        curve = {}
        for label, s in cstats.items():
            # hyperfine runs a command's warm-up before its timed runs: the first lines.
            times = sorted(float(t) for t in open(logs[label]).read().split()[warmup:])
            inner = times[len(times) // 2]
            s["inner_median_s"] = inner
            s["calls"] = 2 * cfiles
            s["calls_per_second"] = 2 * cfiles / inner
            curve[label] = s
        self.results["groups"]["percall"] = {
            "files": n, "rows": stats, "per_call_us": derived,
            "curve": {"procs": CURVE_PROCS, "files": cfiles, "rows": curve},
        }

    # ---------------------------------------------------------------- machine

    def machine(self):
        def first(path, key):
            try:
                for line in open(path):
                    if line.startswith(key):
                        return line.split(":", 1)[1].strip()
            except OSError:
                pass
            return None

        def version(argv):
            try:
                r = subprocess.run(argv, capture_output=True, text=True)
                return (r.stdout or r.stderr).strip().splitlines()[0]
            except (OSError, IndexError):
                return None

        os_name = None
        try:
            for line in open("/etc/os-release"):
                if line.startswith("PRETTY_NAME="):
                    os_name = line.split("=", 1)[1].strip().strip('"')
        except OSError:
            pass
        mem = first("/proc/meminfo", "MemTotal")
        try:
            landlock = json.loads(sh([self.jaula, "check", "--json"], check=False)).get("landlock")
        except ValueError:
            landlock = None
        return {
            "cpu": first("/proc/cpuinfo", "model name"),
            "nproc": os.cpu_count(),
            "memory_gib": round(int(mem.split()[0]) / 2**20, 1) if mem else None,
            "kernel": platform.release(),
            "os": os_name,
            "landlock": (landlock or {}).get("kernel"),
            "jaula": version([self.jaula, "--version"]),
            "bwrap": version(["bwrap", "--version"]),
            "firejail": version(["firejail", "--version"]),
            "hyperfine": version(["hyperfine", "--version"]),
            "git": version(["git", "--version"]),
            "rustc": version(["rustc", "--version"]),
        }

    def run(self):
        os.makedirs(self.work, exist_ok=True)
        open(os.path.join(self.work, "hyperfine.log"), "w").close()
        self.extract_cage_py()
        start = time.time()
        self.results["machine"] = self.machine()
        self.results["load_average_before"] = list(os.getloadavg())
        for group in GROUPS:
            if self.only and group not in self.only:
                continue
            t = time.time()
            getattr(self, f"group_{group}")()
            self.results.setdefault("group_seconds", {})[group] = round(time.time() - t, 1)
        self.results["load_average_after"] = list(os.getloadavg())
        self.results["duration_s"] = round(time.time() - start, 1)


CONNECTS = """import os, socket, sys, threading
n = int(sys.argv[1])
path = "gate-bench.sock"
if os.path.exists(path):
    os.unlink(path)
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(128)
def accept():
    for _ in range(n):
        c, _ = srv.accept()
        c.close()
t = threading.Thread(target=accept)
t.start()
for _ in range(n):
    c = socket.socket(socket.AF_UNIX)
    c.connect(path)
    c.close()
t.join()
os.unlink(path)
"""

FILES = """import os, sys
n = int(sys.argv[1])
os.makedirs("gate-files", exist_ok=True)
for i in range(n):
    with open(f"gate-files/f{i}", "w") as f:
        f.write("x")
for i in range(n):
    os.unlink(f"gate-files/f{i}")
"""

# python creates: DIR N makes N files of a few bytes in DIR (1,000 a directory).
CREATES = """import os, sys
top, n = sys.argv[1], int(sys.argv[2])
for d in range((n + 999) // 1000):
    os.makedirs(f"{top}/d{d:02}", exist_ok=True)
for i in range(n):
    with open(f"{top}/d{i // 1000:02}/f{i:05}", "w") as f:
        f.write("x")
"""

# calls.py P N DIR [TIMES]: P processes, each creating N empty files in DIR/pK (one gated
# openat each) and then unlinking them (one gated unlinkat each). With TIMES, the wall
# time from the fork to the last child's exit is appended to that file (the curve's
# figure: the launch and python's own start stay out of it).
CALLS = """import os, sys, time
procs, n, top = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
dirs = [f"{top}/p{k}" for k in range(procs)]
for d in dirs:
    os.makedirs(d, exist_ok=True)
flags = os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC
def work(d):
    names = [f"{d}/f{i}" for i in range(n)]
    for name in names:
        os.close(os.open(name, flags, 0o644))
    for name in names:
        os.unlink(name)
start = time.monotonic()
if procs == 1:
    work(dirs[0])
else:
    pids = []
    for d in dirs:
        pid = os.fork()
        if pid == 0:
            try:
                work(d)
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if status != 0:
            sys.exit("a caller failed")
elapsed = time.monotonic() - start
if len(sys.argv) > 4:
    with open(sys.argv[4], "a") as f:
        f.write(f"{elapsed:.6f}\\n")
"""

# agents-city's cage.py does `import rutas` (a path-helper module outside its diff) and calls
# three of its functions; docs/compatibility.md says what they mean. They are written here
# under English names, and bound to the Spanish names cage.py calls them by at the end.
PATH_HELPERS = """import os
def canonical(path):
    return os.path.realpath(os.path.expanduser(path))
def lies_within(path, root):
    path, root = os.path.normpath(path), os.path.normpath(root)
    return os.path.commonpath([path, root]) == root
def refusal_reason(repo, sealed):
    for root in sealed:
        if lies_within(repo, root):
            return repo + ' is inside the sealed root ' + root
        if lies_within(root, repo):
            return repo + ' contains the sealed root ' + root
    return None
canonicaliza, dentro_de, motivo_bloqueo = canonical, lies_within, refusal_reason
"""

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--jaula", default=None, help="the jaula binary to measure")
    ap.add_argument("--jaula-dynamic", default=None,
                    help="a dynamically linked build, for the process-floor row")
    ap.add_argument("--scratch-home", default=None,
                    help="jaula-testkit's jaula-scratch-home, which makes the scratch homes")
    a = ap.parse_args()
    only = [g for g in a.only.split(",") if g]
    for g in only:
        if g not in GROUPS:
            raise SystemExit(f"bench: unknown group {g} (groups: {', '.join(GROUPS)})")
    h = Harness(os.path.realpath(a.root), a.quick, only, a.jaula, a.jaula_dynamic,
                a.scratch_home)
    h.run()
    results_dir = os.path.join(h.root, "bench/results")
    os.makedirs(results_dir, exist_ok=True)
    name = "bench-quick.json" if a.quick else ("bench.json" if not only else "bench-partial.json")
    path = os.path.join(results_dir, name)
    json.dump(h.results, open(path, "w"), indent=1, sort_keys=False)
    log(f"wrote {os.path.relpath(path, h.root)}")
    if name == "bench.json":
        subprocess.run([sys.executable, os.path.join(h.root, "bench/render.py"), path], check=True)


if __name__ == "__main__":
    main()
