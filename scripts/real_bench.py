"""Run a real-model bench in its fixed order, one run at a time, and commit each finished run's records as it
ends: runs of hours that outlive a session. ``--bench real`` (the default) is issue 37's
benchmarks/bench_real.yaml (:data:`ORDER`), ``--bench multistep`` issue 57's benchmarks/bench_multistep.yaml
(:data:`MULTISTEP_ORDER`).

    nohup .venv-vllm/bin/python scripts/real_bench.py > runs/real_bench.log 2>&1 &
    nohup .venv-vllm/bin/python scripts/real_bench.py --bench multistep > runs/multistep_bench.log 2>&1 &

Issues 57 and 58 now (multi23's paired seeds, the React level, multi23's controls, then the 4-5 operation level)::

    nohup .venv-vllm/bin/python scripts/real_bench.py --bench multistep-headline --bench react-checks \
        --bench multistep --bench multistep45 > runs/bench.log 2>&1 &

Each command (:data:`ORDER`, widened run by run) adds runs to its folder (``runs/bench/real-<folder>``, a
level's own name unless the entry names another: one level's runs may be split over folders, e.g. the methods
compared at one seed beside the paired seeds; the runs before it in the folder are reused, a run stopped midway
continues from its last checkpoint). Each run's metrics (gzipped) and summary are copied to
``docs/results/real-<folder>/`` and committed (only those paths) as soon as it finishes, and the folder's report
when the command ends. A fresh checkout has no ``runs/``: before each command the folder's committed records are
put back there (:func:`restore`), so finished runs are reused, not trained again; a run stopped midway in an
earlier checkout starts again from step 0. Run it again in the next session: it goes on where it stopped.
``--dry-run`` prints the commands.

What is committed is read from git (``HEAD``), not the work tree: a commit git refused (a stale
``.git/index.lock``) is tried again at the next look and by the next start, and its message names the lock. A
SIGTERM, SIGINT or SIGHUP to the driver stops the bench's whole process group (the bench runs in its own session):
its runs stop at a step boundary with a checkpoint, the driver waits for them, commits what finished and exits
``128 + signal``; nothing is left running to meet the next start.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = "benchmarks/bench_real.yaml"
BOTGRPO = ROOT / ".venv-vllm" / "bin" / "botgrpo"
#: seconds between looks for runs that finished while a command goes on
POLL_S = 60.0
#: tries and seconds between them for a commit that git refuses (another git command holds .git/index.lock)
COMMIT_TRIES = 30
COMMIT_WAIT_S = 10.0
#: seconds a stopped bench's runs get to reach a step boundary and save a checkpoint before they are killed
STOP_GRACE_S = 900.0

#: (level, methods, seeds) per command, in the order fixed with the settings; a level's seeds are added one at a
#: time (a bench plan is methods x seeds, so each command adds one run per method: paired seeds end together).
#: Fixed with the settings (benchmarks/bench_real.yaml's header), before any run.
#: An entry is (level, methods, seeds) or (level, methods, seeds, folder): the folder defaults to the level's name.
ORDER: list[tuple[Any, ...]] = [
    ("react-lr5e-5", ["bot-grpo", "grpo"], [0]),
    ("react-lr2e-4", ["bot-grpo", "grpo"], [0]),
    # React's stage 2 (bench_real.yaml, "STAGE 2, HOW"; level react-tuned), before math's stage 1
    # the centred arm (bench_real.yaml, react-centred: added after stage 1 was seen, a test of its suggested cause):
    # seed 0 next, so that its answer comes this session; seeds 1-2 after React's other methods
    ("react-centred", ["bot-grpo"], [0]),
    ("react-tuned", ["bot-grpo", "grpo"], [0, 1, 2], "react-tuned"),
    # math (bench_real.yaml, "MATH LEVEL", fixed before any of its runs); its stage 2 is added once its rule is
    # applied. Moved before React's other methods on 2026-12-04 (bench_real.yaml, "ORDER, CHANGED"): math's stage 2
    # cannot be fixed before its stage 1 has run, and no run's settings depend on the order.
    ("math-lr5e-5", ["bot-grpo", "grpo"], [0]),
    ("math-lr2e-4", ["bot-grpo", "grpo"], [0]),
    ("react-tuned", ["dapo", "gspo", "pure"], [0], "react-tuned-others"),
    # math's stage 2 (bench_real.yaml, "MATH'S STAGE 2, CHANGED"; benchmarks/results/real_select_math.json: both
    # methods took 2e-4): added 2026-12-05 after stage 1's rule was applied, before any of these runs; after
    # React's other methods, whose dapo run had finished and gspo run begun by then. Seed 0 is stage 1's run.
    ("math-lr2e-4", ["bot-grpo", "grpo"], [0, 1, 2]),
    ("math-lr2e-4", ["dapo"], [0], "math-lr2e-4-others"),
    # the cut fix (bench_real.yaml, "MATH'S CUT FIX": added 2026-12-05 before any of its runs, a test of the
    # cause math-lr2e-4's seed 1 showed): seed 0 before the centred arm's seeds 1-2, seeds 1-2 after them
    ("math-lr2e-4-cutfix", ["bot-grpo"], [0]),
    ("react-centred", ["bot-grpo"], [0, 1, 2]),
    ("math-lr2e-4-cutfix", ["bot-grpo"], [0, 1, 2]),
]

#: issue 57's order (benchmarks/bench_multistep.yaml's header, fixed with its settings before any run): the
#: learning-rate pilot on seed 100 (excluded from the headline), the eight paired seeds of level multi23, the controls
MULTISTEP_ORDER: list[tuple[Any, ...]] = [
    ("multi23-pilot", ["bot-grpo"], [100]),
    ("multi23", ["bot-grpo", "grpo"], [0, 1, 2, 3, 4, 5, 6, 7]),
    # the controls, 4 seeds each
    ("multi23-shuffled", ["bot-grpo"], [0, 1, 2, 3]),
    ("multi23", ["pure"], [0, 1, 2, 3], "multi23-pure"),
]

#: issue 57's pilot and paired seeds alone (MULTISTEP_ORDER's first two entries): ``--bench multistep-headline
#: --bench react-checks --bench multistep`` runs issue 58's level between multi23's headline and its controls, so
#: the React headline is not kept waiting on the controls (the runs and their settings are the same; only when
#: they run changes, decided before any control or React run)
MULTISTEP_HEADLINE: list[tuple[Any, ...]] = MULTISTEP_ORDER[:2]

#: issue 57's second level (benchmarks/bench_multistep45.yaml's header, fixed with its settings before any run):
#: after multi23's controls, the pilot on seed 100 (excluded from the headline), then the eight paired seeds
MULTISTEP45_ORDER: list[tuple[Any, ...]] = [
    ("multi45-pilot", ["bot-grpo"], [100]),
    ("multi45", ["bot-grpo", "grpo"], [0, 1, 2, 3, 4, 5, 6, 7]),
]

#: issue 58's order (benchmarks/bench_react_checks.yaml's header, fixed with its settings before any run): after
#: issue 57's level multi23 (``--bench multistep --bench react-checks``), the pilot on seed 100, then seeds 0-5
REACT_CHECKS_ORDER: list[tuple[Any, ...]] = [
    ("react-checks-pilot", ["bot-grpo"], [100]),
    ("react-checks", ["bot-grpo", "grpo"], [0, 1, 2, 3, 4, 5]),
]

#: --bench NAME: (bench file, the name of its order in this module, the issue its commit messages name)
BENCHES: dict[str, tuple[str, str, str]] = {
    "real": (BENCH, "ORDER", "issue 37"),
    "multistep": ("benchmarks/bench_multistep.yaml", "MULTISTEP_ORDER", "issue 57"),
    "multistep-headline": ("benchmarks/bench_multistep.yaml", "MULTISTEP_HEADLINE", "issue 57"),
    "multistep45": ("benchmarks/bench_multistep45.yaml", "MULTISTEP45_ORDER", "issue 57"),
    "react-checks": ("benchmarks/bench_react_checks.yaml", "REACT_CHECKS_ORDER", "issue 58"),
}


def _load_plan(order: list[tuple[Any, ...]]) -> list[tuple[str, list[str], list[int], str]]:
    """The commands, (level, methods, seeds, folder): a folder's first seed one method at a time (a commit per
    run), then each further seed for all methods at once (a bench plan is methods x seeds, and a folder's record
    only widens); finished runs are reused."""
    out = []
    for level, methods, seeds, *folder in order:
        name = folder[0] if folder else level
        out += [(level, methods[: m + 1], seeds[:1], name) for m in range(len(methods))]
        out += [(level, methods, seeds[: k + 1], name) for k in range(1, len(seeds))]
    return out


def _started(folder: str) -> set[tuple[str, int]]:
    """(method, seed) of every run folder the bench folder holds, finished or not."""
    runs = ROOT / "runs" / "bench" / f"real-{folder}" / "runs"
    return {(d.parent.name, int(d.name[4:])) for d in runs.glob("*/*/seed*") if d.is_dir()}


def record(folder: str) -> Path:
    """Copy the bench folder's report and run records to docs/results/real-<folder>/."""
    src = ROOT / "runs" / "bench" / f"real-{folder}"
    dst = ROOT / "docs" / "results" / f"real-{folder}"
    (dst / "metrics").mkdir(parents=True, exist_ok=True)
    for path in src.iterdir():
        if path.is_file() and path.suffix in (".md", ".json", ".jsonl", ".png"):
            shutil.copy2(path, dst / path.name)
    for result in src.glob("runs/*/*/seed*/bench_result.json"):
        run = result.parent
        name = f"{run.parent.name}_{run.name}"
        if (run / "metrics.jsonl").is_file():
            with (
                open(run / "metrics.jsonl", "rb") as f,
                open(dst / "metrics" / f"{name}.metrics.jsonl.gz", "wb") as raw,
                gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g,  # mtime 0: the same bytes on every copy
            ):
                shutil.copyfileobj(f, g)
        for extra in ("summary.json", "config.yaml", "bench_result.json"):
            if (run / extra).is_file():
                shutil.copy2(run / extra, dst / "metrics" / f"{name}.{extra}")
    return dst


def record_and_pages(folder: str) -> list[Path]:
    """:func:`record`, then the published pages written again from the records (``python -m
    botgrpo_bench.results_pages``: README.md's results table, docs/results.md, docs/results/<study>.md), so that a
    study's page and its statistic move with each committed run (the pages' test rebuilds them from the committed
    records and must find them equal). Returns the paths to commit; a page that cannot be written is named and the
    records are committed all the same. A README edit of your own in the work tree goes in with them."""
    paths = [record(folder)]
    if not (ROOT / "benchmarks" / "results_prefaces").is_dir():  # a checkout without the pages
        return paths
    done = subprocess.run(
        [sys.executable, "-m", "botgrpo_bench.results_pages", "--root", str(ROOT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        print(
            f"the results pages were not written (records committed all the same): {done.stderr.strip()[-800:]}",
            file=sys.stderr,
            flush=True,
        )
        return paths
    results = ROOT / "docs" / "results"
    return [*paths, ROOT / "README.md", ROOT / "docs" / "results.md", *sorted(results.glob("*.md"))]


def _finished_in(texts: list[str]) -> set[tuple[str, int]]:
    """(method, seed) of the finished runs among ``bench_result.json`` texts (a torn one is skipped)."""
    out = set()
    for text in texts:
        try:
            saved = json.loads(text)
        except json.JSONDecodeError:  # being written
            continue
        if isinstance(saved, dict) and saved.get("status") == "ok":
            _, method, seed = saved["label"].rsplit("/", 2)
            out.add((method, int(seed.removeprefix("seed"))))
    return out


def _read_all(paths: list[Path]) -> list[str]:
    texts = []
    for path in paths:
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except OSError:
            continue
    return texts


def finished(folder: str) -> set[tuple[str, int]]:
    """(method, seed) of every finished run in the bench folder ``runs/bench/real-<folder>/``."""
    results = (ROOT / "runs" / "bench" / f"real-{folder}").glob("runs/*/*/seed*/bench_result.json")
    return _finished_in(_read_all(list(results)))


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def committed(folder: str) -> set[tuple[str, int]]:
    """(method, seed) of every finished run whose records git holds in ``HEAD`` under docs/results/real-<folder>/.

    Read from git, not the work tree: a commit that failed (a stale ``.git/index.lock``) leaves the files in the
    work tree but not in ``HEAD``, and such a run is committed again, not taken for committed."""
    where = f"docs/results/real-{folder}/metrics/"
    listed = _git("ls-tree", "-r", "--name-only", "HEAD", "--", where)
    if listed.returncode != 0:  # no repository or no commit yet: nothing is committed
        return set()
    texts = []
    for name in listed.stdout.splitlines():
        if name.endswith(".bench_result.json"):
            shown = _git("show", f"HEAD:{name}")
            if shown.returncode == 0:
                texts.append(shown.stdout)
    return _finished_in(texts)


def restore(folder: str) -> int:
    """Put the committed records of ``folder``'s finished runs back under ``runs/bench/real-<folder>/`` where that
    folder lacks them (a fresh checkout), so the bench reuses them; returns how many runs were put back.

    The inverse of :func:`record`: the report files go to the folder, each run's files to the run folder its
    ``bench_result.json`` names (``runs/<level>/<method>/seed<N>``), its metrics ungzipped. A run folder that
    already holds a finished run is left as it is; a committed finished run wins over one stopped midway."""
    src = ROOT / "docs" / "results" / f"real-{folder}"
    dst = ROOT / "runs" / "bench" / f"real-{folder}"
    if not src.is_dir():
        return 0
    put_back = 0
    for result in sorted(src.glob("metrics/*.bench_result.json")):
        name = result.name.removesuffix(".bench_result.json")
        run = dst / "runs" / json.loads(result.read_text(encoding="utf-8"))["label"]
        if (run / "bench_result.json").is_file():
            continue
        run.mkdir(parents=True, exist_ok=True)
        for extra in ("summary.json", "config.yaml"):
            if (src / "metrics" / f"{name}.{extra}").is_file():
                shutil.copy2(src / "metrics" / f"{name}.{extra}", run / extra)
        gz = src / "metrics" / f"{name}.metrics.jsonl.gz"
        if gz.is_file():
            with gzip.open(gz, "rb") as g, open(run / "metrics.jsonl", "wb") as f:
                shutil.copyfileobj(g, f)
        shutil.copy2(result, run / "bench_result.json")  # last: a run folder with it is a finished run
        put_back += 1
    if put_back:
        for path in src.iterdir():
            if path.is_file() and not (dst / path.name).exists():
                shutil.copy2(path, dst / path.name)
    return put_back


def commit(paths: list[Path], message: str) -> bool:
    """Commit only ``paths``, retrying while git refuses (another git command holds ``.git/index.lock``); whether
    git's ``HEAD`` now holds them as they are in the work tree (checked with git, not assumed). A failure prints git's
    own reason (the lock, not the pathspec error that follows it) and the fix."""
    rel = [str(p.relative_to(ROOT)) for p in paths]
    why = ""
    for attempt in range(COMMIT_TRIES):
        if attempt:
            time.sleep(COMMIT_WAIT_S)
        add = _git("add", "--", *rel)
        if add.returncode != 0:
            why = add.stderr.strip() or add.stdout.strip()
            continue
        done = _git("commit", "-q", "-m", message, "--", *rel)
        left = _git("status", "--porcelain", "--", *rel)
        if left.returncode == 0 and not left.stdout.strip():
            return True
        why = (done.stderr or done.stdout).strip() or f"git status still lists {left.stdout.strip()}"
    first = why.splitlines()[0] if why else "git refused"
    hint = (
        " (a stale .git/index.lock: once no git command runs, remove it and start the driver again; it commits "
        "every finished run git does not hold)"
        if "index.lock" in why
        else ""
    )
    print(f"could not commit {rel} after {COMMIT_TRIES} tries: {first}{hint}", file=sys.stderr, flush=True)
    return False


class _Stop:
    """SIGTERM, SIGINT or SIGHUP to the driver: passed on as SIGTERM to the bench's whole process group (the bench,
    its run processes and their workers), whose runs stop at a step boundary with a checkpoint; the driver then
    waits for the group, records and commits what finished, and exits ``128 + signal``."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def __init__(self) -> None:
        self.signum: int | None = None
        self.group: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Stop:
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.signum = self.signum or signum
        self.forward()

    def forward(self) -> None:
        if self.group is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.group, signal.SIGTERM)

    def wait_group(self, grace_s: float) -> None:
        """Until no process of the bench's group is left running (SIGKILL after ``grace_s``)."""
        if self.group is None:
            return
        end = time.monotonic() + grace_s
        while True:
            if not _group_running(self.group):
                return
            if time.monotonic() > end:
                print(
                    f"the bench's processes outlived {grace_s:.0f} s: killing them",
                    file=sys.stderr,
                    flush=True,
                )
                try:
                    os.killpg(self.group, signal.SIGKILL)
                except ProcessLookupError:
                    return
                end = time.monotonic() + 60
            time.sleep(0.2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument(
        "--bench",
        choices=sorted(BENCHES),
        action="append",
        help="which bench and order (default real); given twice or more, the benches run one after the other",
    )
    args = parser.parse_args()
    with _Stop() as stop:
        for name in args.bench or ["real"]:
            code = _commands(args.dry_run, stop, name)
            if code != 0:
                return code
        return 0


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (an exited child nobody has reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return not Path("/proc").is_dir()  # no /proc: kill(0) is all we know
    return stat.rpartition(")")[2].split()[0] != "Z"


def _group_running(group: int) -> bool:
    """Whether a process of process group ``group`` is running (zombies, which a signal cannot reach, are not)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text(encoding="utf-8").rpartition(")")[2].split()
        except OSError:
            continue
        if len(fields) > 2 and int(fields[2]) == group and fields[0] != "Z":
            return True
    return False


def _commit_finished(folder: str, issue: str = "issue 37") -> bool:
    """Commit the records of every finished run of ``folder`` that git does not hold yet; whether all went in."""
    ok = True
    for method, seed in sorted(finished(folder) - committed(folder)):
        ok = (
            commit(
                record_and_pages(folder),
                f"{issue} real-model bench, {folder}: records after {method} seed {seed} (finished; the "
                "command goes on; scripts/real_bench.py)",
            )
            and ok
        )
    return ok


def _commands(dry_run: bool, stop: _Stop, bench_name: str = "real") -> int:
    bench_file, order, issue = BENCHES[bench_name]
    for level, methods, seeds, folder in _load_plan(globals()[order]):
        if stop.signum is not None:
            break
        cmd = [
            str(BOTGRPO), "bench", bench_file, "--output", f"runs/bench/real-{folder}",
            "--set", f"include=[{level}]", "--set", f"methods=[{', '.join(methods)}]",
            "--set", f"seeds=[{', '.join(map(str, seeds))}]",
        ]  # fmt: skip
        print(" ".join(cmd), flush=True)
        if dry_run:
            continue
        if {(m, s) for m in methods for s in seeds} <= committed(folder):
            print("done: every run of this command is committed", flush=True)
            continue
        if back := restore(folder):
            print(f"put back {back} finished run(s) from docs/results/real-{folder}/", flush=True)
        later = _started(folder) - {(m, s) for m in methods for s in seeds}
        if later:
            # a later command of this level has begun (a stop midway): the bench refuses a plan narrower than the
            # folder's record, and the later command reuses this one's finished runs anyway
            print(f"skipped: the folder already holds later runs {sorted(later)}", flush=True)
            continue
        # its own session: a signal to the driver reaches the bench, its runs and their workers as one group
        bench = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True)
        stop.group = bench.pid
        if stop.signum is not None:
            stop.forward()  # the signal came between the check above and the start
        while (code := bench.poll()) is None:
            time.sleep(POLL_S)
            # a command adding a seed runs one run per method, hours in all: commit each run as it finishes, so that
            # a session's end loses at most the run in progress (the next checkout puts the finished ones back)
            _commit_finished(folder, issue)
        if stop.signum is not None:
            stop.wait_group(STOP_GRACE_S)  # the runs finish their step and save; the bench itself is gone
        stop.group = None
        # the command's plan, not what finished: a stopped command's last runs are interrupted records
        plan = f"{', '.join(methods)} x seeds [{', '.join(map(str, seeds))}]"
        saved = commit(
            record_and_pages(folder),
            f"{issue} real-model bench, {folder}: records as the command for {plan} ended (botgrpo bench exit "
            f"{code}; scripts/real_bench.py)",
        )
        if stop.signum is not None:
            name = signal.Signals(stop.signum).name
            print(
                f"stopped by {name}: the bench and its runs are stopped (runs stopped midway continue from their "
                "last checkpoint), finished runs recorded; run scripts/real_bench.py again to go on",
                flush=True,
            )
            return 128 + stop.signum
        if not saved:
            print(
                "the records are not committed (above); stopping: run scripts/real_bench.py again", flush=True
            )
            return 1
        if code != 0:
            print(f"bench exited {code}; stopping (run scripts/real_bench.py again to go on)", flush=True)
            return code
    return 128 + stop.signum if stop.signum is not None else 0


if __name__ == "__main__":
    sys.exit(main())
